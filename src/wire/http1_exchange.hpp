// One HTTP/1.1 request and its buffered response on an open connection:
// Beast message conversion, the head under its header timeout, the body
// under its idle timeout and its cap, decoded (gzip) as it arrives.
#ifndef PRISM_E2B_WIRE_HTTP1_EXCHANGE_HPP
#define PRISM_E2B_WIRE_HTTP1_EXCHANGE_HPP

#include "wire/connection.hpp"
#include "wire/http_message.hpp"

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <string>

namespace prism_e2b::wire {

using beast_request = boost::beast::http::request<boost::beast::http::string_body>;
using time_point = std::chrono::steady_clock::time_point;

/// The Beast message for `r` to `o` (base path prepended, Host set, keep-alive).
/// With `accept_encoding`, Accept-Encoding is added unless `r` has one.
beast_request to_beast(origin const& o, http_request const& r, bool accept_encoding);
header_list from_beast(boost::beast::http::fields const& f);

/// Bounds of one exchange.
struct exchange_bounds {
    time_point deadline = time_point::max();      ///< the attempt's deadline
    std::chrono::milliseconds header_timeout{0};  ///< request sent and head read; 0: only the deadline
    std::chrono::milliseconds idle_timeout{0};    ///< silence while reading the body; 0: only the deadline
    std::size_t max_body = 0;                     ///< decoded body cap
};

/// The earlier of `deadline` and now + `step` (0: none).
time_point earliest(time_point deadline, std::chrono::milliseconds step) noexcept;

/// What an exchange learnt before it ended (for the replay and pooling decisions).
struct exchange_progress {
    bool got_bytes = false;   ///< any response byte arrived
    bool keep_alive = false;  ///< the response allows reuse
};

/// Writes `req` and reads the whole response on `c` (call on its strand).
/// With `upload`, the request's body is streamed from it (rewound first; each
/// piece written under the idle timeout) instead of taken from `req`.
/// Errors: see io_error(); errc::limit_exceeded over the cap (decoded size),
/// errc::protocol_error for a corrupt or unoffered encoding,
/// errc::invalid_argument when `upload` yields other than its size.
boost::asio::awaitable<result<http_response>> exchange_on(connection& c, beast_request const& req,
                                                          exchange_bounds bounds, exchange_progress& progress,
                                                          std::string what, body_source* upload = nullptr);

}  // namespace prism_e2b::wire

#endif
