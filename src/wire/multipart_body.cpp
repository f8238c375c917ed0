#include "wire/multipart_body.hpp"

#include <algorithm>
#include <random>

namespace prism_e2b::wire {

std::string multipart_boundary(std::vector<std::string_view> const& contents)
{
    thread_local std::mt19937_64 rng{std::random_device{}()};
    std::string b = "prism-e2b-" + std::to_string(rng()) + std::to_string(rng());
    auto clashes = [&] {
        return std::any_of(contents.begin(), contents.end(),
                           [&](std::string_view c) { return c.find(b) != std::string_view::npos; });
    };
    while (clashes()) b += std::to_string(rng() % 10);
    return b;
}

std::string multipart_content_type(std::string const& boundary) { return "multipart/form-data; boundary=" + boundary; }

std::string multipart_part_head(std::string const& boundary, std::string_view filename)
{
    std::string name;
    for (char c : filename) name += (c == '"' || c == '\r' || c == '\n') ? '_' : c;
    return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + name +
           "\"\r\nContent-Type: application/octet-stream\r\n\r\n";
}

std::string multipart_part_gap() { return "\r\n"; }

std::string multipart_tail(std::string const& boundary) { return "\r\n--" + boundary + "--\r\n"; }

}  // namespace prism_e2b::wire
