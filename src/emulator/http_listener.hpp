// The HTTP/1.1 listener of the local server (Beast lives in the .cpp only).
#ifndef PRISM_E2B_EMULATOR_HTTP_LISTENER_HPP
#define PRISM_E2B_EMULATOR_HTTP_LISTENER_HPP

#include <prism_e2b/error.hpp>
#include <prism_e2b/local_server.hpp>
#include <prism_e2b/log.hpp>

#include "emulator/http_message.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace prism_e2b::local::detail {

/// How much a client may hold (see server_options for what each means).
struct listener_limits {
    std::size_t max_connections = 512;
    std::size_t max_buffered_bytes = 256u << 20;
    std::chrono::milliseconds header_timeout = std::chrono::seconds(10);
    std::chrono::milliseconds idle_timeout = std::chrono::seconds(60);
};

/// Accepts connections and runs one keep-alive session per connection, each on
/// its own strand (a session's reads, writes and handler run serialised there).
/// Each request's head goes to `check` before its body is read; a refusal is sent
/// without reading the body. Bodies are reserved against a shared byte budget.
/// Thread safety: start()/stop()/stats() from any thread; the session set is behind a mutex.
class http_listener {
public:
    http_listener(boost::asio::any_io_executor ex, request_handler handler, head_check_fn check, listener_limits limits,
                  log_sink logger);
    ~http_listener();

    /// Binds and listens synchronously; returns the bound port.
    result<std::uint16_t> start(std::string const& address, std::uint16_t port);
    /// Serves on a socket that is already listening (the envd agent's Unix socket, which
    /// the server bound before the sandbox existed). Takes ownership of `listening_fd`.
    result<void> adopt(int listening_fd);
    /// Closes the acceptor and every open connection.
    void stop();
    listener_stats stats() const;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace prism_e2b::local::detail

#endif
