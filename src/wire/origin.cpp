#include "wire/origin.hpp"

#include "protocol/ascii_lower.hpp"

namespace prism_e2b::wire {

std::string origin::key() const
{
    return std::string(tls ? "https://" : "http://") + protocol::ascii_lower(host) + ":" + port;
}

std::string origin::host_header() const
{
    std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    if ((tls && port == "443") || (!tls && port == "80")) return h;
    return h + ":" + port;
}

result<origin> parse_origin(std::string_view url)
{
    origin o;
    auto bad = [&](std::string_view why) -> result<origin> {
        return error(errc::invalid_argument, "invalid URL '" + std::string(url) + "': " + std::string(why));
    };
    std::string_view rest;
    if (url.substr(0, 8) == "https://") {
        o.tls = true;
        rest = url.substr(8);
    } else if (url.substr(0, 7) == "http://") {
        o.tls = false;
        rest = url.substr(7);
    } else {
        return bad("the scheme must be http or https");
    }
    auto slash = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    if (!path.empty() && path.front() != '/') return bad("query or fragment not allowed");
    if (authority.find('@') != std::string_view::npos) return bad("user info not allowed");
    if (authority.empty()) return bad("missing host");
    if (authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) return bad("unterminated IPv6 literal");
        o.host = std::string(authority.substr(1, close - 1));
        auto after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return bad("garbage after IPv6 literal");
            o.port = std::string(after.substr(1));
        }
    } else {
        auto colon = authority.rfind(':');
        if (colon != std::string_view::npos) {
            o.host = std::string(authority.substr(0, colon));
            o.port = std::string(authority.substr(colon + 1));
        } else {
            o.host = std::string(authority);
        }
    }
    if (o.host.empty()) return bad("missing host");
    if (o.port.empty()) o.port = o.tls ? "443" : "80";
    if (o.port.size() > 5 || !std::all_of(o.port.begin(), o.port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoul(o.port) == 0 || std::stoul(o.port) > 65535)
        return bad("invalid port");
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    o.base_path = std::string(path);
    return o;
}

std::string path_of(std::string const& target) { return target.substr(0, target.find('?')); }

}  // namespace prism_e2b::wire
