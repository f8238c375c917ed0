#include "emulator/os_users.hpp"

#include "protocol/base64.hpp"

namespace prism_e2b::local::detail {

std::optional<os_user> lookup_user(std::string_view name)
{
    if (name.empty() || name == "user") return os_user{"user", default_uid, default_gid, "/home/user"};
    if (name == "root") return os_user{"root", 0, 0, "/root"};
    return std::nullopt;
}

std::optional<std::string> basic_auth_user(std::string_view header)
{
    if (header.empty()) return std::string();
    if (header.size() < 6 || (header.substr(0, 6) != "Basic " && header.substr(0, 6) != "basic ")) return std::nullopt;
    auto decoded = prism_e2b::detail::base64_decode(header.substr(6));
    if (!decoded) return std::nullopt;
    auto const colon = decoded->find(':');
    return decoded->substr(0, colon);
}

}  // namespace prism_e2b::local::detail
