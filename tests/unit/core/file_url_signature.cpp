// The /files URL signature the client signs with and the local server checks
// (protocol/file_url_signature.hpp). The expected values were computed with
// node's crypto, as the SDK's signature.ts does:
//   "v1_" + createHash("sha256").update(raw).digest("base64") without '=' padding
#include "protocol/file_url_signature.hpp"

#include <boost/test/unit_test.hpp>

#include <optional>
#include <set>
#include <string>

using prism_e2b::detail::file_url_signature;

BOOST_AUTO_TEST_SUITE(test_file_url_signature)

BOOST_AUTO_TEST_CASE(matches_the_sdk_without_an_expiry)
{
    // raw: "/home/user/a b.txt:read:user:envd-token-abcdef"
    BOOST_TEST(file_url_signature("/home/user/a b.txt", "read", "user", "envd-token-abcdef", std::nullopt) ==
               "v1_tOIYNX7/1z6UImtl1lea95FWsgB2DlHKmobpwwdPb4Y");
}

BOOST_AUTO_TEST_CASE(matches_the_sdk_with_an_expiry_and_no_user)
{
    // raw: "/home/user/up.bin:write::envd-token-abcdef:1767225600"
    BOOST_TEST(file_url_signature("/home/user/up.bin", "write", "", "envd-token-abcdef", 1767225600) ==
               "v1_Qn5KHQB4ggVhWBhf8L3z3MiCnMj4Ar7gzPZhRapUFLs");
}

BOOST_AUTO_TEST_CASE(every_input_changes_the_signature)
{
    auto const base = file_url_signature("/a", "read", "user", "token", 100);
    BOOST_TEST(base.rfind("v1_", 0) == 0u);
    BOOST_TEST(base.size() == 3u + 43u);  // 32 bytes in base64, without its one '='
    BOOST_TEST(base.find('=') == std::string::npos);
    std::set<std::string> const others = {
        file_url_signature("/b", "read", "user", "token", 100),
        file_url_signature("/a", "write", "user", "token", 100),
        file_url_signature("/a", "read", "root", "token", 100),
        file_url_signature("/a", "read", "user", "other", 100),
        file_url_signature("/a", "read", "user", "token", 101),
        file_url_signature("/a", "read", "user", "token", std::nullopt),
    };
    BOOST_TEST(others.size() == 6u);
    BOOST_TEST(!others.count(base));
    BOOST_TEST(file_url_signature("/a", "read", "user", "token", 100) == base);  // deterministic
}

BOOST_AUTO_TEST_SUITE_END()
