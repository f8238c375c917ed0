// The local server's HTTP/2: one nghttp2 server session per connection (h2c
// with prior knowledge, or TLS after ALPN picked h2), each request's head
// judged by the same head check as HTTP/1.1 before its body is taken, bodies
// capped by the route's limit, responses through the same response_sink (a
// streamed response is DATA frames sent as the handler writes, with at most a
// window's worth queued per stream). Used by http_listener.
#ifndef PRISM_E2B_EMULATOR_H2_CONNECTION_HPP
#define PRISM_E2B_EMULATOR_H2_CONNECTION_HPP

#include <prism_e2b/log.hpp>

#include "emulator/http_message.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string_view>

namespace prism_e2b::local::detail {

/// The client connection preface ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").
inline constexpr std::string_view h2_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Test hooks of one HTTP/2 connection (fault_injector-style, off by default).
struct h2_faults {
    bool goaway_after_first_request = false;  ///< GOAWAY(last id = the first stream) once it is answered
};

struct h2_serve_options {
    request_handler handler;
    head_check_fn check;
    std::chrono::milliseconds idle_timeout{60000};  ///< no stream open and nothing received: GOAWAY and close
    log_sink logger;
    /// The listener's shared byte budget for request bodies (empty: none).
    std::function<bool(std::size_t)> try_reserve;
    std::function<void(std::size_t)> release;
    h2_faults faults;
};

/// Serves HTTP/2 on `stream` (already connected, on its strand) until the peer
/// or the session ends; `initial` are bytes already read (the preface).
/// Stream: beast::tcp_stream or an ssl_stream over one.
template <class Stream>
boost::asio::awaitable<void> serve_h2(Stream& stream, std::string initial, h2_serve_options const& opts);

}  // namespace prism_e2b::local::detail

#endif
