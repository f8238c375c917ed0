#include <prism_e2b/error.hpp>
#include <prism_e2b/redactor.hpp>

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;

BOOST_AUTO_TEST_SUITE(test_error)

BOOST_AUTO_TEST_CASE(canary_secret_never_reaches_what)
{
    std::string const canary = "e2b_canary_4f1d2c3b9a";
    secret_redactor::global().add(canary);
    error e(errc::unauthenticated, "key " + canary + " was refused", {"create " + canary, 401, canary});
    BOOST_TEST(e.message().find(canary) == std::string::npos);
    BOOST_TEST(e.to_string().find(canary) == std::string::npos);
    BOOST_TEST(e.to_string().find("[REDACTED]") != std::string::npos);
    result<int> r = e;
    try {
        (void)r.value();
        BOOST_FAIL("value() must throw");
    } catch (exception const& ex) {
        BOOST_TEST(std::string(ex.what()).find(canary) == std::string::npos);
        BOOST_TEST(ex.code() == make_error_code(errc::unauthenticated));
        BOOST_TEST(ex.get_error().http_status() == 401);
    }
}

BOOST_AUTO_TEST_CASE(secret_registered_later_is_redacted_in_to_string)
{
    std::string const late = "late_canary_secret_77";
    error e(errc::server_error, "saw " + late);
    secret_redactor::global().add(late);
    BOOST_TEST(e.to_string().find(late) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(category_names_every_condition)
{
    for (int v = static_cast<int>(errc::invalid_argument); v <= static_cast<int>(errc::server_error); ++v) {
        auto ec = make_error_code(static_cast<errc>(v));
        BOOST_TEST(ec.message().find("unknown prism_e2b error") == std::string::npos);
        BOOST_TEST(std::string(ec.category().name()) == "prism_e2b");
    }
    BOOST_TEST(is_retryable(errc::service_busy));
    BOOST_TEST(is_retryable(errc::rate_limited));
    BOOST_TEST(!is_retryable(errc::wrong_owner));
    BOOST_TEST(!is_retryable(errc::unknown_outcome));
}

BOOST_AUTO_TEST_SUITE_END()
