// The HTTP/1.1 listener of the local server (Beast lives in the .cpp only).
#ifndef PRISM_E2B_EMULATOR_HTTP_LISTENER_HPP
#define PRISM_E2B_EMULATOR_HTTP_LISTENER_HPP

#include <prism_e2b/error.hpp>
#include <prism_e2b/log.hpp>

#include "emulator/http_message.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace prism_e2b::local::detail {

/// Accepts connections and runs one keep-alive session per connection, each on
/// its own strand (a session's reads, writes and handler run serialised there).
/// Thread safety: start()/stop() from any thread; the session set is behind a mutex.
class http_listener {
public:
    http_listener(boost::asio::any_io_executor ex, request_handler handler, body_limit_fn limits, log_sink logger);
    ~http_listener();

    /// Binds and listens synchronously; returns the bound port.
    result<std::uint16_t> start(std::string const& address, std::uint16_t port);
    /// Closes the acceptor and every open connection.
    void stop();

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace prism_e2b::local::detail

#endif
