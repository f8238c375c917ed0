// Control-plane encoding and parsing: the SDK's URL encodings (encodeURIComponent,
// URLSearchParams), list queries, and lenient Sandbox / SandboxDetail parsing.
#include "wire/rest_json.hpp"

#include <prism_e2b/redactor.hpp>

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::wire;

BOOST_AUTO_TEST_SUITE(test_rest_json)

BOOST_AUTO_TEST_CASE(uri_encodings_match_javascript)
{
    BOOST_TEST(rest::encode_uri_component("aZ09-_.!~*'()") == "aZ09-_.!~*'()");
    BOOST_TEST(rest::encode_uri_component("a b&c=d/e?f#g%") == "a%20b%26c%3Dd%2Fe%3Ff%23g%25");
    BOOST_TEST(rest::encode_uri_component("\xc3\xa9") == "%C3%A9");  // é as UTF-8
    BOOST_TEST(rest::form_urlencode("a b*-._!~'()%") == "a+b*-._%21%7E%27%28%29%25");
}

BOOST_AUTO_TEST_CASE(list_queries)
{
    e2b::list_params p;
    BOOST_TEST(rest::list_target(p) == "/v2/sandboxes");
    p.metadata = {{"k", "v w"}, {"a!", "1"}};
    p.states = {e2b::sandbox_state::paused};
    p.next_token = "abc/=";
    // std::map order: "a!" first. "a!" -> a! -> a%21 -> a%2521 ; "v w" -> v%20w -> v%2520w -> v%252520w
    BOOST_TEST(rest::list_target(p) ==
               "/v2/sandboxes?metadata=a%2521%3D1%26k%3Dv%252520w&state=paused&nextToken=abc%2F%3D");
}

BOOST_AUTO_TEST_CASE(create_body_defaults)
{
    e2b::create_sandbox_params p;
    BOOST_TEST(rest::create_body(p) ==
               R"({"templateID":"base","timeout":300,"secure":true,"allow_internet_access":true})");
}

BOOST_AUTO_TEST_CASE(volume_mounts_go_out_and_come_back)
{
    e2b::create_sandbox_params p;
    p.volume_mounts.push_back({"data", "/mnt/data"});
    BOOST_TEST(rest::create_body(p, rest::create_api::v2) ==
               R"({"templateID":"base","timeout":300,"allow_internet_access":true,)"
               R"("volumeMounts":[{"name":"data","path":"/mnt/data"}]})");
    auto i = rest::parse_sandbox_detail(R"({"sandboxID":"s","volumeMounts":[{"name":"data","path":"/mnt/data"}]})");
    BOOST_TEST_REQUIRE(i.has_value());
    BOOST_TEST((i->volume_mounts.size() == 1 && i->volume_mounts[0].name == "data"));
    BOOST_TEST((rest::parse_sandbox_detail(R"({"sandboxID":"s","volumeMounts":{}})").error() == errc::protocol_error));
    BOOST_TEST((rest::parse_sandbox_detail(R"({"sandboxID":"s","volumeMounts":[{"name":1}]})").error() ==
                errc::protocol_error));
}

BOOST_AUTO_TEST_CASE(sandbox_parsing_is_lenient_but_checks_types)
{
    auto h = rest::parse_sandbox(
        R"({"sandboxID":"s","templateID":"t","envdVersion":"0.5.7","domain":null,"trafficAccessToken":null,"new":1})");
    BOOST_TEST_REQUIRE(h.has_value());
    BOOST_TEST(!h->domain);
    BOOST_TEST(!h->envd_access_token);
    BOOST_TEST((rest::parse_sandbox(R"({"templateID":"t"})").error() == errc::protocol_error));  // no id
    BOOST_TEST((rest::parse_sandbox("[]").error() == errc::protocol_error));
    BOOST_TEST((rest::parse_sandbox_detail(R"({"sandboxID":"s","state":"zombie"})").error() == errc::protocol_error));
    BOOST_TEST((rest::parse_sandbox_detail(R"({"sandboxID":"s","metadata":{"a":1}})").error() == errc::protocol_error));
    auto tok = rest::parse_sandbox_detail(R"({"sandboxID":"s","envdAccessToken":"detail-token-xyz"})");
    BOOST_TEST(*tok->envd_access_token == "detail-token-xyz");
    BOOST_TEST(secret_redactor::global().is_secret("detail-token-xyz"));
    BOOST_TEST(rest::parse_sandbox_list("null")->empty());
    BOOST_TEST((rest::parse_sandbox_list("{}").error() == errc::protocol_error));
}

BOOST_AUTO_TEST_CASE(out_of_range_numbers_are_protocol_errors)
{
    // Found by fuzz_rest_json: converting -1e3002 (-inf) to int was undefined behaviour.
    for (char const* n : {"-1e3002", "1e300", "2147483648", "-2147483649", "18446744073709551615"}) {
        auto const body = std::string(R"({"sandboxID":"s","cpuCount":)") + n + "}";
        auto const r = rest::parse_sandbox_detail(body);
        BOOST_TEST_REQUIRE(!r.has_value(), n);
        BOOST_TEST((r.error() == errc::protocol_error));
        BOOST_TEST(r.error().message().find("cpuCount") != std::string::npos);
    }
    auto ok = rest::parse_sandbox_detail(R"({"sandboxID":"s","cpuCount":2.0,"memoryMB":-1,"diskSizeMB":2147483647})");
    BOOST_TEST_REQUIRE(ok.has_value());
    BOOST_TEST(ok->cpu_count == 2);
    BOOST_TEST(ok->memory_mb == -1);
    BOOST_TEST(ok->disk_size_mb == 2147483647);
}

BOOST_AUTO_TEST_CASE(an_empty_sandbox_id_is_refused_and_holds_no_token)
{
    // Found by fuzz_rest_json: an empty id held the token with no scope to
    // release it, so it stayed a secret for the whole process.
    auto& redactor = secret_redactor::global();
    auto const before = redactor.size();
    auto const d = rest::parse_sandbox_detail(R"({"sandboxID":"","envdAccessToken":"empty-id-token-1"})");
    BOOST_TEST_REQUIRE(!d.has_value());
    BOOST_TEST((d.error() == errc::protocol_error));
    auto const s = rest::parse_sandbox(R"({"sandboxID":"","templateID":"t","envdAccessToken":"empty-id-token-2"})");
    BOOST_TEST_REQUIRE(!s.has_value());
    BOOST_TEST((s.error() == errc::protocol_error));
    auto const l = rest::parse_sandbox_list(R"([{"sandboxID":""}])");
    BOOST_TEST_REQUIRE(!l.has_value());
    BOOST_TEST((l.error() == errc::protocol_error));
    BOOST_TEST(redactor.size() == before);
}

BOOST_AUTO_TEST_SUITE_END()
