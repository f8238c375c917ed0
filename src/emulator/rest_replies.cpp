#include "emulator/rest_replies.hpp"

#include <boost/json.hpp>

#include <map>

namespace prism_e2b::local::detail {

http_response rest_error(int status, std::string const& message)
{
    http_response r;
    r.status = status;
    boost::json::object o;
    o["code"] = status;
    o["message"] = message;
    r.body = boost::json::serialize(o);
    return r;
}

http_response json_response(int status, boost::json::value const& v)
{
    http_response r;
    r.status = status;
    r.body = boost::json::serialize(v);
    return r;
}

http_response connect_error(std::string const& code, std::string const& message)
{
    static std::map<std::string, int> const status = {
        {"canceled", 499},
        {"unknown", 500},
        {"invalid_argument", 400},
        {"deadline_exceeded", 504},
        {"not_found", 404},
        {"already_exists", 409},
        {"permission_denied", 403},
        {"resource_exhausted", 429},
        {"failed_precondition", 400},
        {"aborted", 409},
        {"out_of_range", 400},
        {"unimplemented", 501},
        {"internal", 500},
        {"unavailable", 503},
        {"data_loss", 500},
        {"unauthenticated", 401},
    };
    http_response r;
    auto it = status.find(code);
    r.status = it == status.end() ? 500 : it->second;
    boost::json::object o;
    o["code"] = code;
    o["message"] = message;
    r.body = boost::json::serialize(o);
    return r;
}

std::optional<http_response> parse_unary_json(http_request const& req, boost::json::value& out)
{
    if (req.header("content-type").rfind("application/json", 0) != 0) {
        http_response r = connect_error("internal", "unsupported content type; use application/json");
        r.status = 415;
        return r;
    }
    boost::system::error_code ec;
    out = boost::json::parse(req.body.empty() ? std::string_view("{}") : std::string_view(req.body), ec);
    if (ec || !out.is_object()) return connect_error("invalid_argument", "request body is not a JSON object");
    return std::nullopt;
}

}  // namespace prism_e2b::local::detail
