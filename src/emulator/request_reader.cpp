#include "emulator/request_reader.hpp"

#include <algorithm>
#include <cctype>

namespace prism_e2b::local::detail {

std::string request_path(std::string_view target)
{
    return url_decode(target.substr(0, target.find('?')), false);  // '+' is literal in a path
}

http_request request_from_head(boost::beast::http::request_header<> const& head)
{
    http_request req;
    req.set_method(std::string(head.method_string()));
    req.target = std::string(head.target());
    req.path = request_path(req.target);
    if (auto const q = req.target.find('?'); q != std::string::npos) req.query = req.target.substr(q + 1);
    for (auto const& f : head) {
        std::string name(f.name_string());
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        req.headers.emplace_back(std::move(name), std::string(f.value()));
    }
    return req;
}

http_request make_http_request(boost::beast::http::request<boost::beast::http::string_body>&& msg)
{
    http_request req = request_from_head(msg.base());
    req.received = std::chrono::steady_clock::now();
    req.body = std::move(msg.body());
    return req;
}

}  // namespace prism_e2b::local::detail
