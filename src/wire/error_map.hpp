// Vendor answers to prism_e2b::error: REST statuses and bodies (as the official
// SDK decides them, wire-notes.md) and Connect code names (connect-protocol spec).
#ifndef PRISM_E2B_WIRE_ERROR_MAP_HPP
#define PRISM_E2B_WIRE_ERROR_MAP_HPP

#include <prism_e2b/error.hpp>

#include <string>
#include <string_view>

namespace prism_e2b::wire {

/// A 2xx status: the call did what it asked.
inline bool http_success(int status) noexcept { return status >= 200 && status < 300; }

/// What a REST error body says: {"code":<int>,"message":"..."}; code 0 / empty
/// message when absent or not JSON.
struct rest_error_body {
    int code = 0;
    std::string message;
};
rest_error_body parse_rest_error_body(std::string_view body);

/// The status the official SDK decides on: the body's `code` when it is a
/// valid HTTP error code, else the HTTP status.
int effective_rest_status(int http_status, rest_error_body const& body) noexcept;

/// 401 unauthenticated, 403 permission_denied, 404 not_found, 409 conflict,
/// 429 rate_limited, 503 service_busy, other 5xx server_error, other 4xx invalid_argument.
errc errc_from_http_status(int status) noexcept;

/// A REST error for a non-2xx answer; the message is the vendor's, redacted.
error rest_error(std::string operation, int http_status, std::string_view body);

/// envd's plain HTTP errors (/files, /health; the SDK's envd error map): 502 is
/// not_found (the sandbox is not running), 400 invalid_argument, 507
/// limit_exceeded, others as rest_error (defined in envd_client.cpp).
error envd_http_error(std::string op, int status, std::string_view body);

/// Connect code name -> errc (unknown names: server_error).
errc errc_from_connect_code(std::string_view code) noexcept;

/// The Connect code implied by an HTTP status when the body carries none
/// (connect-protocol "HTTP to error code" table).
std::string_view connect_code_from_http_status(int status) noexcept;

/// A Connect error from its JSON object {"code":"...","message":"..."}.
error connect_error(std::string operation, std::string_view code, std::string_view message, int http_status = 0);

/// A unary Connect error from a non-200 answer: the body's code when it is a
/// Connect error object, else the status mapping.
error connect_unary_error(std::string operation, int http_status, std::string_view body);

}  // namespace prism_e2b::wire

#endif
