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
    /// Both set: every connection is TLS (ALPN h2 or http/1.1) with this PEM certificate chain and key.
    std::string tls_cert_file;
    std::string tls_key_file;
};

/// Accepts connections and runs one keep-alive session per connection (HTTP/1.1,
/// or HTTP/2: h2c with prior knowledge, or h2 chosen by ALPN under TLS), each on
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
    /// Serves TLS (ALPN h2, http/1.1) with this certificate chain and key from now on
    /// (start() calls it when the limits name them). errc::invalid_argument when they do not load.
    result<void> use_tls(std::string const& cert_file, std::string const& key_file);
    /// Closes the acceptor and every open connection.
    void stop();
    listener_stats stats() const;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace prism_e2b::local::detail

#endif
