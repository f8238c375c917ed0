// Basic-auth user selection (envd: `Authorization: Basic base64("<user>:")`):
// never crashes, and a well-formed header always names its user.
#include "emulator/os_users.hpp"
#include "fuzz_input.hpp"
#include "protocol/base64.hpp"

using namespace prism_e2b;
using namespace prism_e2b::local::detail;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    auto const text = fuzz::as_text(data, size);
    auto const user = basic_auth_user(text);
    if (text.empty()) fuzz::require(user && user->empty(), "no header selects the default user");
    if (user) {
        auto const who = lookup_user(*user);
        fuzz::require(!who || who->name == "user" || who->name == "root", "only user and root exist");
    }
    // The client's encoding of a user name round-trips through the server's parser.
    auto const name = text.substr(0, text.find(':'));
    auto const header = "Basic " + prism_e2b::detail::base64_encode(std::string(name) + ":");
    auto const back = basic_auth_user(header);
    fuzz::require(back && *back == name, "an encoded user name decodes to itself");
    return 0;
}
