#include "wire/http_message.hpp"

#include <algorithm>
#include <cctype>

namespace prism_e2b::wire {

namespace {

bool iequals(std::string_view a, std::string_view b) noexcept
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

std::string const* find_header(header_list const& headers, std::string_view name) noexcept
{
    for (auto const& [k, v] : headers)
        if (iequals(k, name)) return &v;
    return nullptr;
}

std::optional<std::string> invalid_request(http_request const& r)
{
    auto bad_char = [](std::string_view s) {
        return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
    };
    if (r.method.empty() || bad_char(r.method) || r.method.find(' ') != std::string::npos) return "invalid HTTP method";
    if (r.target.empty() || r.target.front() != '/' || bad_char(r.target) || r.target.find(' ') != std::string::npos)
        return "invalid request target";
    for (auto const& [k, v] : r.headers) {
        if (k.empty() || bad_char(k) || k.find_first_of(" :") != std::string::npos) return "invalid header name";
        if (bad_char(v)) return "invalid value of header " + k;
    }
    return std::nullopt;
}

}  // namespace prism_e2b::wire
