// REST and Connect replies of the routes: error bodies, JSON bodies, and the
// JSON object of a Connect unary request.
#ifndef PRISM_E2B_EMULATOR_REST_REPLIES_HPP
#define PRISM_E2B_EMULATOR_REST_REPLIES_HPP

#include "emulator/http_message.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>

namespace prism_e2b::local::detail {

/// REST error body {"code":<status>,"message":...}.
http_response rest_error(int status, std::string const& message);
/// A JSON body with `status`.
http_response json_response(int status, boost::json::value const& v);
/// Connect unary error: HTTP status from the code, body {"code":"<name>","message":...}.
http_response connect_error(std::string const& code, std::string const& message);
/// The JSON object of a Connect unary request (an empty body is {}) into `out`;
/// otherwise the error to answer: 415 for a content type other than
/// application/json, invalid_argument for a body that is not a JSON object.
std::optional<http_response> parse_unary_json(http_request const& req, boost::json::value& out);

}  // namespace prism_e2b::local::detail

#endif
