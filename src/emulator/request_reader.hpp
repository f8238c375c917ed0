// How the listener reads a request, the sans-io parts: the head's size limit,
// the target's path, and the handler's http_request built from Beast's head and message.
// Shared by http_listener.cpp and the HTTP fuzz target (tests/fuzz/).
#ifndef PRISM_E2B_EMULATOR_REQUEST_READER_HPP
#define PRISM_E2B_EMULATOR_REQUEST_READER_HPP

#include "emulator/http_message.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace prism_e2b::local::detail {

/// Longest request head (request line and headers) the listener reads.
inline constexpr std::size_t request_header_limit = 64 * 1024;

/// The target's path (before '?'), percent-decoded with '+' kept literal.
std::string request_path(std::string_view target);

/// The handler's view of a request head (no body yet): method, target, path and
/// raw query split from the target, header names lower-cased. The listener
/// judges credentials on it before it reads a byte of the body.
http_request request_from_head(boost::beast::http::request_header<> const& head);

/// The handler's view of a parsed request (request_from_head plus the body): path and raw query split from the
/// target, header names lower-cased, `received` set to now.
http_request make_http_request(boost::beast::http::request<boost::beast::http::string_body>&& msg);

}  // namespace prism_e2b::local::detail

#endif
