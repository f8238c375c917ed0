#include "emulator/route_paths.hpp"

#include "emulator/http_message.hpp"

namespace prism_e2b::local::detail {

std::vector<std::pair<std::string, std::string>> parse_query(std::string_view q)
{
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t i = 0;
    while (i <= q.size()) {
        auto j = q.find('&', i);
        if (j == std::string_view::npos) j = q.size();
        auto part = q.substr(i, j - i);
        if (!part.empty()) {
            auto eq = part.find('=');
            if (eq == std::string_view::npos)
                out.emplace_back(url_decode(part), std::string());
            else
                out.emplace_back(url_decode(part.substr(0, eq)), url_decode(part.substr(eq + 1)));
        }
        i = j + 1;
    }
    return out;
}

std::optional<std::string> sandbox_route_id(std::string_view path, std::string_view suffix)
{
    constexpr std::string_view prefix = "/sandboxes/";
    if (path.size() <= prefix.size() + suffix.size() || !path.starts_with(prefix) || !path.ends_with(suffix))
        return std::nullopt;
    auto const id = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
    if (id.find('/') != std::string_view::npos) return std::nullopt;
    return std::string(id);
}

}  // namespace prism_e2b::local::detail
