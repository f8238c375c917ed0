// Vendor answers to errc: REST statuses (the body's code decides, as in the
// official SDK) and Connect code names, with redacted messages.
#include "wire/error_map.hpp"

#include <prism_e2b/redactor.hpp>

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::wire;

BOOST_AUTO_TEST_SUITE(test_error_map)

BOOST_AUTO_TEST_CASE(http_statuses)
{
    BOOST_TEST((errc_from_http_status(401) == errc::unauthenticated));
    BOOST_TEST((errc_from_http_status(403) == errc::permission_denied));
    BOOST_TEST((errc_from_http_status(404) == errc::not_found));
    BOOST_TEST((errc_from_http_status(409) == errc::conflict));
    BOOST_TEST((errc_from_http_status(429) == errc::rate_limited));
    BOOST_TEST((errc_from_http_status(503) == errc::service_busy));
    BOOST_TEST((errc_from_http_status(500) == errc::server_error));
    BOOST_TEST((errc_from_http_status(504) == errc::server_error));
    BOOST_TEST((errc_from_http_status(400) == errc::invalid_argument));
    BOOST_TEST((errc_from_http_status(410) == errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(body_code_decides_and_messages_are_redacted)
{
    secret_redactor::global().add("sekrit-value-1234");
    auto e = rest_error("kill", 400, R"({"code":404,"message":"no sandbox for sekrit-value-1234"})");
    BOOST_TEST((e == errc::not_found));
    BOOST_TEST(e.http_status() == 400);
    BOOST_TEST(e.vendor_code() == "404");
    BOOST_TEST(e.message() == "no sandbox for [REDACTED]");
    auto plain = rest_error("x", 502, "upstream sekrit-value-1234 down");
    BOOST_TEST((plain == errc::server_error));
    BOOST_TEST(plain.message().find("sekrit") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(connect_codes)
{
    struct {
        char const* code;
        errc want;
    } const cases[] = {
        {"not_found", errc::not_found},
        {"unauthenticated", errc::unauthenticated},
        {"permission_denied", errc::permission_denied},
        {"resource_exhausted", errc::limit_exceeded},
        {"unavailable", errc::service_busy},
        {"deadline_exceeded", errc::timed_out},
        {"canceled", errc::cancelled},
        {"already_exists", errc::already_exists},
        {"invalid_argument", errc::invalid_argument},
        {"failed_precondition", errc::conflict},
        {"unimplemented", errc::unsupported},
        {"internal", errc::server_error},
        {"unknown", errc::server_error},
        {"brand_new_code", errc::server_error},
    };
    for (auto const& c : cases) BOOST_TEST((errc_from_connect_code(c.code) == c.want), c.code);
    auto e = connect_unary_error("process.Process/SendSignal", 404, R"({"code":"not_found","message":"no pid"})");
    BOOST_TEST((e == errc::not_found));
    BOOST_TEST(e.vendor_code() == "not_found");
    BOOST_TEST(e.operation() == "process.Process/SendSignal");
    // No Connect body: the HTTP status decides.
    BOOST_TEST((connect_unary_error("x", 502, "<html>") == errc::service_busy));
    BOOST_TEST((connect_unary_error("x", 401, "") == errc::unauthenticated));
    BOOST_TEST((connect_unary_error("x", 500, "") == errc::server_error));
}

BOOST_AUTO_TEST_SUITE_END()
