// The OS identities a sandbox knows ("user" and "root", as E2B's templates) and
// the user an envd request names in its Basic authorization.
#ifndef PRISM_E2B_EMULATOR_OS_USERS_HPP
#define PRISM_E2B_EMULATOR_OS_USERS_HPP

#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace prism_e2b::local::detail {

/// An OS identity inside a sandbox. E2B templates know "user" (the default, uid
/// 1000, home /home/user) and "root"; so does this server.
struct os_user {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string home;
};

inline constexpr uid_t default_uid = 1000;
inline constexpr gid_t default_gid = 1000;

/// "user" (also for an empty name) or "root"; nullopt for any other name.
std::optional<os_user> lookup_user(std::string_view name);
/// The name an `Authorization: Basic base64("<user>:")` header selects: "" when the
/// header is absent, nullopt when it is malformed.
std::optional<std::string> basic_auth_user(std::string_view header);

}  // namespace prism_e2b::local::detail

#endif
