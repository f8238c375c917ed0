// Secrets: with a canary API key and envd access token, and a server that
// echoes them back in error texts, no log line and no error text contains
// them, while the server did receive them (the test is not vacuous).
#include <prism_e2b/e2b/client.hpp>

#include "client_fixture.hpp"
#include "run_coro.hpp"

#include <boost/test/unit_test.hpp>

#include <regex>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

BOOST_AUTO_TEST_SUITE(test_secrets)

namespace {
std::string const canary_key = "e2b_CANARY_KEY_7f3a9c1d";
std::string const canary_token = "CANARY_TOKEN_b8e2d4f6";
std::string const created_token = "CANARY_CREATED_TOKEN_1a2b3c";
}  // namespace

BOOST_AUTO_TEST_CASE(no_secret_in_logs_or_errors)
{
    test_http_server server([](recorded_request const& r) {
        auto key = r.header("X-API-KEY").value_or("");
        auto tok = r.header("X-Access-Token").value_or("");
        if (r.target == "/v2/sandboxes")
            return scripted_response::json(
                201,
                R"({"templateID":"base","sandboxID":"sbx9","clientID":"c","envdVersion":"0.5.7","envdAccessToken":")" +
                    created_token + R"("})");
        if (r.path() == "/sandboxes/sbx9")
            return scripted_response::json(401, R"({"code":401,"message":"key )" + key + R"( is not valid"})");
        if (r.path() == "/sandboxes/sbx9/pause")
            return scripted_response::json(500, R"({"code":500,"message":"internal: )" + key + R"("})");
        if (r.path() == "/process.Process/Start")
            return connect_stream({R"({"event":{"start":{"pid":1}}})"},
                                  R"({"error":{"code":"unauthenticated","message":"token )" + tok + R"( expired"}})");
        return scripted_response::json(401, R"({"code":"unauthenticated","message":"bad token )" + tok + R"("})");
    });
    log_capture logs;
    std::vector<std::string> texts;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto o = options_for(server.url(), &logs);
        o.api_key = canary_key;
        auto c = e2b::make_client(ex, o);
        BOOST_TEST_REQUIRE(c.has_value());
        auto& cl = **c;
        e2b::create_sandbox_params p;
        auto h = co_await cl.async_create_sandbox(p);
        BOOST_TEST_REQUIRE(h.has_value());
        auto info = co_await cl.async_get_sandbox_info("sbx9");
        texts.push_back(info.error().to_string());
        texts.push_back(info.error().message());
        auto pause = co_await cl.async_pause_sandbox("sbx9", true);
        texts.push_back(pause.error().to_string());
        e2b::envd_target t;
        t.sandbox_id = "sbx9";
        t.access_token = canary_token;
        t.envd_version = "0.5.7";
        auto l = co_await cl.async_list_processes(t);
        texts.push_back(l.error().to_string());
        e2b::start_process_params sp;
        sp.process.cmd = "x";
        auto s = co_await cl.async_start_process(t, sp);
        BOOST_TEST_REQUIRE(s.has_value());
        (void)co_await (*s)->async_next();
        auto end = co_await (*s)->async_next();
        BOOST_TEST_REQUIRE(end.has_error());
        BOOST_TEST((end.error() == errc::unauthenticated));
        texts.push_back(end.error().to_string());
        auto created = e2b::envd_target::from(*h);
        auto l2 = co_await cl.async_list_processes(created);
        texts.push_back(l2.error().to_string());
    });
    // The server saw the real secrets...
    auto reqs = server.requests();
    BOOST_TEST(reqs.at(0).header("X-API-KEY").value_or("") == canary_key);
    bool saw_token = false, saw_created = false;
    for (auto const& r : reqs) {
        saw_token |= r.header("X-Access-Token").value_or("") == canary_token;
        saw_created |= r.header("X-Access-Token").value_or("") == created_token;
    }
    BOOST_TEST(saw_token);
    BOOST_TEST(saw_created);
    // ...and echoed them, but nothing we produced contains them.
    auto lines = logs.snapshot();
    BOOST_TEST(lines.size() >= reqs.size());
    for (auto const* bag : {&texts, &lines})
        for (auto const& t : *bag) {
            BOOST_TEST(t.find(canary_key) == std::string::npos, t);
            BOOST_TEST(t.find(canary_token) == std::string::npos, t);
            BOOST_TEST(t.find(created_token) == std::string::npos, t);
        }
    // One line per request: method, origin and path (no query), status, duration.
    std::regex const shape(R"(^(GET|POST|DELETE) http://127\.0\.0\.1:\d+/[^ ?]* (\d{3}|-) \d+ms( .*)?$)");
    for (auto const& l : lines) {
        BOOST_TEST_MESSAGE("log: " << l);
        BOOST_TEST(std::regex_match(l, shape), l);
    }
    BOOST_TEST(texts.at(0).find("[REDACTED]") != std::string::npos, texts.at(0));
    BOOST_TEST(texts.at(3).find("[REDACTED]") != std::string::npos, texts.at(3));
}

BOOST_AUTO_TEST_SUITE_END()
