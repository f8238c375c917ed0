// The unary floor: the same envd unary request the SDK sends, issued by a
// minimal Beast keep-alive loop (one connection, sequential calls, no pool,
// no retries, no JSON decoding beyond the status check).
#ifndef PRISM_E2B_BENCH_RAW_FLOOR_HPP
#define PRISM_E2B_BENCH_RAW_FLOOR_HPP

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <memory>
#include <string>
#include <vector>

namespace prism_e2b::bench {

/// One keep-alive connection to envd. Not thread-safe (one call at a time).
class raw_envd_connection {
public:
    raw_envd_connection(boost::asio::any_io_executor ex, int port, std::string sandbox_id, std::string access_token);
    ~raw_envd_connection();
    raw_envd_connection(raw_envd_connection const&) = delete;
    raw_envd_connection& operator=(raw_envd_connection const&) = delete;

    /// Connects (once). Empty on success, else error text.
    boost::asio::awaitable<std::string> connect();
    /// POST /filesystem.Filesystem/Stat {"path": path}; empty on a 200, else error text.
    boost::asio::awaitable<std::string> stat(std::string path);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace prism_e2b::bench

#endif
