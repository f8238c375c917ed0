#include "protocol/base64.hpp"

#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace prism_e2b::detail;

BOOST_AUTO_TEST_SUITE(test_base64)

// RFC 4648 section 10.
std::vector<std::pair<std::string, std::string>> const rfc_vectors = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

BOOST_AUTO_TEST_CASE(standard_rfc4648_vectors)
{
    for (auto const& [plain, encoded] : rfc_vectors) {
        BOOST_TEST(base64_encode(plain) == encoded);
        auto d = base64_decode(encoded);
        BOOST_REQUIRE(d.has_value());
        BOOST_TEST(*d == plain);
    }
}

BOOST_AUTO_TEST_CASE(url_rfc4648_vectors_without_padding)
{
    for (auto const& [plain, encoded] : rfc_vectors) {
        std::string unpadded = encoded.substr(0, encoded.find('='));
        BOOST_TEST(base64url_encode(plain) == unpadded);
        auto d = base64url_decode(unpadded);
        BOOST_REQUIRE(d.has_value());
        BOOST_TEST(*d == plain);
    }
}

BOOST_AUTO_TEST_CASE(alphabets_differ_on_62_and_63)
{
    std::string const bytes = "\xfb\xff\xbf";  // 111110 111111 111110 111111
    BOOST_TEST(base64_encode(bytes) == "+/+/");
    BOOST_TEST(base64url_encode(bytes) == "-_-_");
    BOOST_TEST(!base64_decode("-_-_").has_value());
    BOOST_TEST(!base64url_decode("+/+/").has_value());
    BOOST_TEST(*base64_decode("+/+/") == bytes);
    BOOST_TEST(*base64url_decode("-_-_") == bytes);
}

BOOST_AUTO_TEST_CASE(every_byte_value_round_trips)
{
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (std::size_t n = 0; n <= all.size(); n += 17) {
        auto part = all.substr(0, n);
        BOOST_TEST(*base64_decode(base64_encode(part)) == part);
        BOOST_TEST(*base64url_decode(base64url_encode(part)) == part);
    }
}

BOOST_AUTO_TEST_CASE(standard_rejections)
{
    for (std::string bad : {"Zg", "Zg=", "Zm8", "Z===", "====", "Zg==Zg==", "Zm=v", "Zm9v\n", " Zm9v", "Zm9*",
                            "Zh==" /* non-zero trailing bits */, "Zm9=" /* 'o' would need low bits 0 */, "Zg=A"}) {
        BOOST_TEST(!base64_decode(bad).has_value(), "accepted: " << bad);
    }
    BOOST_TEST(!base64_decode(std::string("Zm9v\0", 5)).has_value());
}

BOOST_AUTO_TEST_CASE(url_rejections)
{
    for (std::string bad : {"Zg==", "Zm8=", "Z", "Zm9vY", "Zh", "Zm9", "Zm+v", "Zm/v", "Zm9v=", "Zm 9", "Zm9v\n"}) {
        BOOST_TEST(!base64url_decode(bad).has_value(), "accepted: " << bad);
    }
    BOOST_TEST(!base64url_decode(std::string("Zm\0v", 4)).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
