#include "wire/error_map.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <utility>

namespace json = boost::json;

namespace prism_e2b::wire {

rest_error_body parse_rest_error_body(std::string_view body)
{
    rest_error_body out;
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec || !v.is_object()) return out;
    auto const& o = v.get_object();
    if (auto const* c = o.if_contains("code")) {
        if (c->is_int64())
            out.code = static_cast<int>(c->get_int64());
        else if (c->is_uint64() && c->get_uint64() < 1000)
            out.code = static_cast<int>(c->get_uint64());
    }
    if (auto const* m = o.if_contains("message"); m && m->is_string()) out.message = std::string(m->get_string());
    return out;
}

int effective_rest_status(int http_status, rest_error_body const& body) noexcept
{
    // The official SDK tests `res.error.code === 404/409` for kill, info, pause
    // and connect, so the body's code decides when it is an error status.
    if (body.code >= 400 && body.code <= 599) return body.code;
    return http_status;
}

errc errc_from_http_status(int status) noexcept
{
    switch (status) {
        case 401:
            return errc::unauthenticated;
        case 403:
            return errc::permission_denied;
        case 404:
            return errc::not_found;
        case 409:
            return errc::conflict;
        case 429:
            return errc::rate_limited;
        case 503:
            return errc::service_busy;
        default:
            break;
    }
    if (status >= 500) return errc::server_error;
    if (status >= 400) return errc::invalid_argument;
    return errc::protocol_error;  // a non-error status where an error was expected
}

error rest_error(std::string operation, int http_status, std::string_view body)
{
    auto b = parse_rest_error_body(body);
    int const status = effective_rest_status(http_status, b);
    std::string msg = b.message;
    if (msg.empty()) {
        // Not the JSON error shape: quote a short prefix of the body.
        msg = std::string(body.substr(0, 200));
        if (msg.empty()) msg = "HTTP " + std::to_string(http_status);
    }
    return error(errc_from_http_status(status), msg,
                 {std::move(operation), http_status, b.code ? std::to_string(b.code) : std::string{}});
}

errc errc_from_connect_code(std::string_view code) noexcept
{
    if (code == "not_found") return errc::not_found;
    if (code == "unauthenticated") return errc::unauthenticated;
    if (code == "permission_denied") return errc::permission_denied;
    if (code == "resource_exhausted") return errc::limit_exceeded;
    if (code == "unavailable") return errc::service_busy;
    if (code == "deadline_exceeded") return errc::timed_out;
    if (code == "canceled") return errc::cancelled;
    if (code == "already_exists") return errc::already_exists;
    if (code == "invalid_argument" || code == "out_of_range") return errc::invalid_argument;
    // The target is in the wrong state for the call (e.g. stdin already closed).
    if (code == "failed_precondition" || code == "aborted") return errc::conflict;
    if (code == "unimplemented") return errc::unsupported;
    return errc::server_error;  // internal, unknown, data_loss and anything new
}

std::string_view connect_code_from_http_status(int status) noexcept
{
    switch (status) {
        case 400:
            return "internal";
        case 401:
            return "unauthenticated";
        case 403:
            return "permission_denied";
        case 404:
            return "unimplemented";
        case 429:
            return "unavailable";
        case 502:
            return "unavailable";
        case 503:
            return "unavailable";
        case 504:
            return "unavailable";
        default:
            return "unknown";
    }
}

error connect_error(std::string operation, std::string_view code, std::string_view message, int http_status)
{
    return error(errc_from_connect_code(code), message.empty() ? std::string_view(code) : message,
                 {std::move(operation), http_status, std::string(code)});
}

error connect_unary_error(std::string operation, int http_status, std::string_view body)
{
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (!ec && v.is_object()) {
        auto const& o = v.get_object();
        auto const* c = o.if_contains("code");
        if (c && c->is_string()) {
            std::string_view message;
            if (auto const* m = o.if_contains("message"); m && m->is_string()) message = m->get_string();
            return connect_error(std::move(operation), c->get_string(), message, http_status);
        }
    }
    // No Connect error body (a proxy answered): decide on the status, with the
    // REST shape's message when there is one.
    if (http_status == 404 || http_status == 401 || http_status == 403 || http_status == 429 || http_status == 503)
        return rest_error(std::move(operation), http_status, body);
    auto const code = connect_code_from_http_status(http_status);
    auto b = parse_rest_error_body(body);
    std::string msg = !b.message.empty() ? b.message : std::string(body.substr(0, 200));
    if (msg.empty()) msg = "HTTP " + std::to_string(http_status);
    return error(errc_from_connect_code(code), msg, {std::move(operation), http_status, std::string(code)});
}

}  // namespace prism_e2b::wire
