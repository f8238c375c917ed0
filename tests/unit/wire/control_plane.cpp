// Wire fidelity of the control plane: method, path, query, headers and JSON
// bodies of every call, and the results derived from every answer (201/200/204,
// 404/409/429/503, error bodies whose code decides).
#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/redactor.hpp>

#include "client_fixture.hpp"
#include "run_coro.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(test_control_plane)

namespace {

std::string const sandbox_json =
    R"({"templateID":"base","sandboxID":"sbx1","clientID":"c","envdVersion":"0.5.7","envdAccessToken":"tok-from-create-9876","domain":"e2b.app","alias":"b"})";

std::string const detail_json =
    R"({"templateID":"base","sandboxID":"sbx1","clientID":"c","startedAt":"2025-01-01T00:00:00Z","endAt":"2025-01-01T00:20:00Z","cpuCount":2,"memoryMB":512,"diskSizeMB":1024,"state":"paused","metadata":{"owner":"me"},"envdVersion":"0.5.7","envdAccessToken":"tok-from-info-5432","lifecycle":{"autoResume":false,"onTimeout":"pause"},"extra":[1,2]})";

template <class F>
auto with_client(test_http_server& server, F body, unsigned max_retries = 3)
{
    return run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto o = options_for(server.url());
        o.max_retries = max_retries;
        auto c = e2b::make_client(ex, o);
        BOOST_TEST_REQUIRE(c.has_value());
        co_await body(**c);
    });
}

void check_api_headers(recorded_request const& r)
{
    BOOST_TEST(r.header("X-API-KEY").value_or("") == "e2b_test_key_0123456789");
    BOOST_TEST(r.header("User-Agent").value_or("") == "prism-e2b/0.1.0");
    BOOST_TEST(!r.header("X-Access-Token"));
}

}  // namespace

BOOST_AUTO_TEST_CASE(create_sends_new_sandbox_and_reads_the_sandbox)
{
    test_http_server server([](recorded_request const&) { return scripted_response::json(201, sandbox_json); });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::create_sandbox_params p;
        p.metadata = {{"owner", "me"}};
        p.env_vars = {{"A", "1"}};
        p.timeout = std::chrono::seconds(600);
        auto h = co_await c.async_create_sandbox(p);
        BOOST_TEST_REQUIRE(h.has_value());
        BOOST_TEST(h->sandbox_id == "sbx1");
        BOOST_TEST(h->envd_version == "0.5.7");
        BOOST_TEST(*h->envd_access_token == "tok-from-create-9876");
        BOOST_TEST(*h->domain == "e2b.app");
        BOOST_TEST(secret_redactor::global().is_secret("tok-from-create-9876"));
    });
    auto reqs = server.requests();
    BOOST_TEST_REQUIRE(reqs.size() == 1u);
    BOOST_TEST(reqs[0].method == "POST");
    BOOST_TEST(reqs[0].target == "/v2/sandboxes");
    check_api_headers(reqs[0]);
    BOOST_TEST(reqs[0].header("Content-Type").value_or("") == "application/json");
    // NewSandboxV2 has no `secure`: v2 sandboxes always want an access token.
    BOOST_TEST(
        json::parse(reqs[0].body) ==
        json::parse(
            R"({"templateID":"base","metadata":{"owner":"me"},"envVars":{"A":"1"},"timeout":600,"allow_internet_access":true})"));
}

BOOST_AUTO_TEST_CASE(create_sends_lifecycle_only_when_set)
{
    test_http_server server([](recorded_request const&) { return scripted_response::json(201, sandbox_json); });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::create_sandbox_params p;
        p.template_id = "tpl";
        p.auto_pause = true;
        p.auto_pause_memory = false;
        p.auto_resume = false;
        BOOST_TEST((co_await c.async_create_sandbox(p)).has_value());
    });
    BOOST_TEST(
        json::parse(server.requests()[0].body) ==
        json::parse(
            R"({"templateID":"tpl","timeout":300,"allow_internet_access":true,"autoPause":true,"autoPauseMemory":false,"autoResume":{"enabled":false}})"));
}

BOOST_AUTO_TEST_CASE(an_insecure_create_goes_to_v1_which_alone_has_secure)
{
    test_http_server server([](recorded_request const&) { return scripted_response::json(201, sandbox_json); });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::create_sandbox_params p;
        p.secure = false;
        BOOST_TEST((co_await c.async_create_sandbox(p)).has_value());
    });
    auto reqs = server.requests();
    BOOST_TEST_REQUIRE(reqs.size() == 1u);
    BOOST_TEST(reqs[0].target == "/sandboxes");
    BOOST_TEST(json::parse(reqs[0].body) ==
               json::parse(R"({"templateID":"base","timeout":300,"secure":false,"allow_internet_access":true})"));
}

BOOST_AUTO_TEST_CASE(a_server_without_v2_is_asked_v1_once_and_then_only_v1)
{
    // An older E2B-compatible service: v2 paths are 405 (create) and 404 (connect).
    test_http_server server([](recorded_request const& r) {
        if (r.target == "/v2/sandboxes") return scripted_response::json(405, R"({"code":405,"message":"no"})");
        if (r.target.rfind("/v2/", 0) == 0) return scripted_response::json(404, R"({"code":404,"message":"no route"})");
        return scripted_response::json(r.target == "/sandboxes" ? 201 : 200, sandbox_json);
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        for (int i = 0; i < 2; ++i) {
            e2b::create_sandbox_params const p;  // named: g++ 12 frees a `{}` argument of co_await twice
            auto h = co_await c.async_create_sandbox(p);
            BOOST_TEST_REQUIRE(h.has_value());
            BOOST_TEST(h->sandbox_id == "sbx1");
            auto k = co_await c.async_connect_sandbox("sbx1", std::chrono::seconds(60));
            BOOST_TEST_REQUIRE(k.has_value());
            BOOST_TEST((k->outcome == e2b::connect_result::kind::already_running));
        }
    });
    std::vector<std::string> targets;
    for (auto const& r : server.requests()) targets.push_back(r.target);
    std::vector<std::string> const want{"/v2/sandboxes",           "/sandboxes", "/v2/sandboxes/sbx1/connect",
                                        "/sandboxes/sbx1/connect", "/sandboxes", "/sandboxes/sbx1/connect"};
    BOOST_TEST(targets == want, boost::test_tools::per_element());
    // The v1 create body is NewSandbox (with `secure`).
    BOOST_TEST(json::parse(server.requests()[1].body).as_object().contains("secure"));
}

BOOST_AUTO_TEST_CASE(a_v1_failure_after_a_v2_404_is_the_answer_and_v2_is_asked_again)
{
    // A v2 server whose 404 is about the template: v1 says the same, nothing is remembered.
    test_http_server server([](recorded_request const&) {
        return scripted_response::json(404, R"({"code":404,"message":"template 'nope' not found"})");
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        for (int i = 0; i < 2; ++i) {
            e2b::create_sandbox_params p;
            p.template_id = "nope";
            auto h = co_await c.async_create_sandbox(p);
            BOOST_TEST_REQUIRE(h.has_error());
            BOOST_TEST((h.error() == errc::not_found));
            BOOST_TEST(h.error().message() == "template 'nope' not found");
        }
    });
    std::vector<std::string> targets;
    for (auto const& r : server.requests()) targets.push_back(r.target);
    std::vector<std::string> const want{"/v2/sandboxes", "/sandboxes", "/v2/sandboxes", "/sandboxes"};
    BOOST_TEST(targets == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(connect_distinguishes_resumed_and_running_and_sends_the_timeout)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        switch (n++) {
            case 0:
                return scripted_response::json(201, sandbox_json);
            case 1:
                return scripted_response::json(200, sandbox_json);
            case 2:  // v2, then v1 (a 404 may be a server without v2): the same answer
            case 3:
                return scripted_response::json(404, R"({"code":404,"message":"paused sandbox sbx1 not found"})");
            default:
                return scripted_response::json(409, R"({"code":409,"message":"being paused"})");
        }
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        auto a = co_await c.async_connect_sandbox("sbx1", std::chrono::seconds(1200));
        BOOST_TEST((a->outcome == e2b::connect_result::kind::resumed));
        auto b = co_await c.async_connect_sandbox("sbx1", std::chrono::seconds(1200));
        BOOST_TEST((b->outcome == e2b::connect_result::kind::already_running));
        auto d = co_await c.async_connect_sandbox("sbx1", std::chrono::seconds(1200));
        BOOST_TEST_REQUIRE(d.has_error());
        BOOST_TEST((d.error() == errc::not_found));
        BOOST_TEST(d.error().http_status() == 404);
        BOOST_TEST(d.error().message() == "paused sandbox sbx1 not found");
        auto e = co_await c.async_connect_sandbox("sbx1", std::chrono::seconds(1200));
        BOOST_TEST((e.error() == errc::conflict));
    });
    auto const reqs = server.requests();
    BOOST_TEST_REQUIRE(reqs.size() == 5u);
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        auto const& r = reqs[i];
        BOOST_TEST(r.method == "POST");
        BOOST_TEST(r.target == (i == 3 ? "/sandboxes/sbx1/connect" : "/v2/sandboxes/sbx1/connect"));
        BOOST_TEST(r.body == R"({"timeout":1200})");
        check_api_headers(r);
    }
}

BOOST_AUTO_TEST_CASE(pause_outcomes)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        switch (n++) {
            case 0:
                return scripted_response::empty(204);
            case 1:
                return scripted_response::json(409, R"({"code":409,"message":"already paused"})");
            case 2:
                return scripted_response::json(503, R"({"code":503,"message":"busy"})");
            case 3:
                return scripted_response::json(404, R"({"code":404,"message":"no such sandbox"})");
            default:
                return scripted_response::json(500, R"({"code":500,"message":"oops"})");
        }
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        using k = e2b::pause_reply::kind;
        BOOST_TEST(((co_await c.async_pause_sandbox("sbx1", true))->outcome == k::paused));
        BOOST_TEST(((co_await c.async_pause_sandbox("sbx1", true))->outcome == k::already_paused));
        auto busy = co_await c.async_pause_sandbox("sbx1", false);
        BOOST_TEST((busy->outcome == k::busy));
        BOOST_TEST(busy->http_status == 503);
        BOOST_TEST(((co_await c.async_pause_sandbox("sbx1", true))->outcome == k::not_found));
        auto bad = co_await c.async_pause_sandbox("sbx1", true);
        BOOST_TEST((bad.error() == errc::server_error));
    });
    auto reqs = server.requests();
    BOOST_TEST_REQUIRE(reqs.size() == 5u);  // a POST is never replayed on 5xx
    BOOST_TEST(reqs[0].target == "/sandboxes/sbx1/pause");
    BOOST_TEST(reqs[0].body == R"({"memory":true})");
    BOOST_TEST(reqs[2].body == R"({"memory":false})");
}

BOOST_AUTO_TEST_CASE(kill_reports_gone_as_false_deciding_on_the_body_code)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        switch (n++) {
            case 0:
                return scripted_response::empty(204);
            case 1:
                return scripted_response::json(404, R"({"code":404,"message":"not found"})");
            case 2:
                return scripted_response::json(400, R"({"code":404,"message":"not found, body decides"})");
            default:
                return scripted_response::json(401, R"({"code":401,"message":"Invalid API key"})");
        }
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        BOOST_TEST(*(co_await c.async_kill_sandbox("sbx1")) == true);
        BOOST_TEST(*(co_await c.async_kill_sandbox("sbx1")) == false);
        BOOST_TEST(*(co_await c.async_kill_sandbox("sbx1")) == false);
        auto e = co_await c.async_kill_sandbox("sbx1");
        BOOST_TEST((e.error() == errc::unauthenticated));
    });
    auto reqs = server.requests();
    BOOST_TEST(reqs[0].method == "DELETE");
    BOOST_TEST(reqs[0].target == "/sandboxes/sbx1");
    BOOST_TEST(reqs[0].body.empty());
}

BOOST_AUTO_TEST_CASE(info_is_parsed_and_retried_on_5xx)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        int i = n++;
        if (i == 0) return scripted_response::json(502, R"({"code":502,"message":"bad gateway"})");
        if (i == 1) return scripted_response::json(200, detail_json);
        return scripted_response::json(404, R"({"code":404,"message":"sandbox sbx2 not found"})");
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        auto i = co_await c.async_get_sandbox_info("sbx1");
        BOOST_TEST_REQUIRE(i.has_value());
        BOOST_TEST((i->state == e2b::sandbox_state::paused));
        BOOST_TEST(i->metadata.at("owner") == "me");
        BOOST_TEST(i->cpu_count == 2);
        BOOST_TEST(i->memory_mb == 512);
        BOOST_TEST(i->disk_size_mb == 1024);
        BOOST_TEST(i->end_at == "2025-01-01T00:20:00Z");
        BOOST_TEST(*i->envd_access_token == "tok-from-info-5432");
        BOOST_TEST_REQUIRE(i->lifecycle.has_value());
        BOOST_TEST(i->lifecycle->on_timeout == "pause");
        auto gone = co_await c.async_get_sandbox_info("sbx2");
        BOOST_TEST((gone.error() == errc::not_found));
    });
    auto reqs = server.requests();
    BOOST_TEST_REQUIRE(reqs.size() == 3u);
    BOOST_TEST(reqs[0].method == "GET");
    BOOST_TEST(reqs[0].target == "/sandboxes/sbx1");
    BOOST_TEST(reqs[1].target == "/sandboxes/sbx1");
}

BOOST_AUTO_TEST_CASE(list_encodes_metadata_twice_and_pages_with_x_next_token)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        auto r = scripted_response::json(
            200,
            n++ == 0
                ? R"([{"templateID":"base","sandboxID":"s1","clientID":"c","startedAt":"x","endAt":"y","cpuCount":1,"memoryMB":2,"diskSizeMB":3,"state":"running","envdVersion":"0.5.7","metadata":{"a b":"c"}}])"
                : "[]");
        if (n == 1) r.headers.emplace_back("X-Next-Token", "page-2");
        return r;
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::list_params p;
        p.metadata = {{"a b", "c"}};
        p.states = {e2b::sandbox_state::running, e2b::sandbox_state::paused};
        p.limit = 10;
        auto page = co_await c.async_list_sandboxes(p);
        BOOST_TEST_REQUIRE(page.has_value());
        BOOST_TEST_REQUIRE(page->sandboxes.size() == 1u);
        BOOST_TEST(page->sandboxes[0].sandbox_id == "s1");
        BOOST_TEST(page->sandboxes[0].metadata.at("a b") == "c");
        BOOST_TEST(*page->next_token == "page-2");
        p.next_token = page->next_token;
        auto last = co_await c.async_list_sandboxes(p);
        BOOST_TEST(last->sandboxes.empty());
        BOOST_TEST(!last->next_token);
        e2b::list_params no_filter;
        auto plain = co_await c.async_list_sandboxes(no_filter);
        BOOST_TEST(plain.has_value());
    });
    auto reqs = server.requests();
    BOOST_TEST(reqs[0].method == "GET");
    BOOST_TEST(reqs[0].target == "/v2/sandboxes?metadata=a%252520b%3Dc&state=running,paused&limit=10");
    BOOST_TEST(reqs[1].target == "/v2/sandboxes?metadata=a%252520b%3Dc&state=running,paused&limit=10&nextToken=page-2");
    BOOST_TEST(reqs[2].target == "/v2/sandboxes");
}

BOOST_AUTO_TEST_CASE(set_timeout_body)
{
    test_http_server server([](recorded_request const&) { return scripted_response::empty(204); });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        BOOST_TEST((co_await c.async_set_sandbox_timeout("sbx1", std::chrono::seconds(30))).has_value());
    });
    auto r = server.requests().at(0);
    BOOST_TEST(r.method == "POST");
    BOOST_TEST(r.target == "/sandboxes/sbx1/timeout");
    BOOST_TEST(r.body == R"({"timeout":30})");
}

BOOST_AUTO_TEST_CASE(rate_limit_is_retried_honouring_retry_after_then_succeeds)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        if (n++ < 2) {
            auto r = scripted_response::json(429, R"({"code":429,"message":"slow down"})");
            r.headers.emplace_back("Retry-After", n == 1 ? "0" : "1");
            return r;
        }
        return scripted_response::json(201, sandbox_json);
    });
    auto const t0 = std::chrono::steady_clock::now();
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::create_sandbox_params defaults;
        auto h = co_await c.async_create_sandbox(defaults);
        BOOST_TEST(h.has_value());
    });
    auto const took = std::chrono::steady_clock::now() - t0;
    BOOST_TEST(server.request_count() == 3u);
    BOOST_TEST(took >= std::chrono::milliseconds(950));  // the second Retry-After: 1 was honoured
    auto reqs = server.requests();
    BOOST_TEST(reqs[0].body == reqs[2].body);
}

BOOST_AUTO_TEST_CASE(rate_limit_exhaustion_is_rate_limited)
{
    test_http_server server([](recorded_request const&) {
        auto r = scripted_response::json(429, R"({"code":429,"message":"slow down"})");
        r.headers.emplace_back("Retry-After", "0");
        return r;
    });
    with_client(
        server,
        [](e2b::client& c) -> asio::awaitable<void> {
            auto h = co_await c.async_kill_sandbox("sbx1");
            BOOST_TEST_REQUIRE(h.has_error());
            BOOST_TEST((h.error() == errc::rate_limited));
            BOOST_TEST(h.error().http_status() == 429);
        },
        2);
    BOOST_TEST(server.request_count() == 3u);  // 1 + max_retries
}

BOOST_AUTO_TEST_CASE(retry_after_beyond_the_request_deadline_is_not_waited_for)
{
    test_http_server server([](recorded_request const&) {
        auto r = scripted_response::json(429, R"({"code":429,"message":"slow down"})");
        r.headers.emplace_back("Retry-After", "3600");
        return r;
    });
    // No clock read: a client that waited would take an hour (the ctest's timeout fails it).
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        auto h = co_await c.async_kill_sandbox("sbx1");
        BOOST_TEST((h.error() == errc::rate_limited));
    });
    BOOST_TEST(server.request_count() == 1u);
}

BOOST_AUTO_TEST_CASE(status_mapping_of_other_errors)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        switch (n++) {
            case 0:
                return scripted_response::json(403, R"({"code":403,"message":"forbidden"})");
            case 1:
                return scripted_response::json(400, R"({"code":400,"message":"bad template"})");
            case 2:
                return scripted_response::json(503, R"({"code":503,"message":"no capacity"})");
            default:
                return scripted_response::json(500, "<html>not json</html>");
        }
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::create_sandbox_params defaults;
        BOOST_TEST(((co_await c.async_create_sandbox(defaults)).error() == errc::permission_denied));
        auto bad = co_await c.async_create_sandbox(defaults);
        BOOST_TEST((bad.error() == errc::invalid_argument));
        BOOST_TEST(bad.error().message() == "bad template");
        BOOST_TEST(((co_await c.async_create_sandbox(defaults)).error() == errc::service_busy));
        auto html = co_await c.async_create_sandbox(defaults);
        BOOST_TEST((html.error() == errc::server_error));
        BOOST_TEST(html.error().message().find("not json") != std::string::npos);
    });
}

BOOST_AUTO_TEST_CASE(malformed_success_body_is_a_protocol_error)
{
    test_http_server server([](recorded_request const&) { return scripted_response::json(201, R"({"sandboxID":5})"); });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::create_sandbox_params defaults;
        BOOST_TEST(((co_await c.async_create_sandbox(defaults)).error() == errc::protocol_error));
    });
}

BOOST_AUTO_TEST_CASE(keep_alive_connection_is_reused)
{
    test_http_server server([](recorded_request const&) { return scripted_response::empty(204); });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        for (int i = 0; i < 20; ++i)
            BOOST_TEST((co_await c.async_set_sandbox_timeout("sbx1", std::chrono::seconds(5))).has_value());
    });
    BOOST_TEST(server.request_count() == 20u);
    BOOST_TEST(server.accepted_connections() == 1u);
}

BOOST_AUTO_TEST_CASE(server_closing_idle_connections_is_survived)
{
    test_http_server server([](recorded_request const&) {
        auto r = scripted_response::empty(204);
        r.close = true;  // every answer closes: the next call must not fail on a stale socket
        return r;
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        for (int i = 0; i < 5; ++i)
            BOOST_TEST((co_await c.async_set_sandbox_timeout("sbx1", std::chrono::seconds(5))).has_value());
    });
    BOOST_TEST(server.accepted_connections() == 5u);
}

BOOST_AUTO_TEST_CASE(configuration_from_the_environment)
{
    ::setenv("E2B_API_KEY", "env_key_abcdef", 1);
    ::setenv("E2B_DOMAIN", "example.test", 1);
    ::unsetenv("E2B_API_URL");
    ::unsetenv("E2B_SANDBOX_URL");
    auto r = e2b::resolve_client_options({});
    BOOST_TEST_REQUIRE(r.has_value());
    BOOST_TEST(r->api_key == "env_key_abcdef");
    BOOST_TEST(r->domain == "example.test");
    BOOST_TEST(r->api_url == "https://api.example.test");
    BOOST_TEST(!r->sandbox_url);
    ::setenv("E2B_API_URL", "ftp://nope", 1);
    BOOST_TEST((e2b::resolve_client_options({}).error() == errc::invalid_argument));
    ::unsetenv("E2B_API_URL");
    ::unsetenv("E2B_API_KEY");
    ::unsetenv("E2B_DOMAIN");
    auto none = e2b::resolve_client_options({});
    BOOST_TEST((none.error() == errc::invalid_argument));
    e2b::client_options o;
    o.api_key = "k_abcdef";
    o.ca_file = "/nonexistent/ca.pem";
    asio::io_context ioc;
    BOOST_TEST((e2b::make_client(ioc.get_executor(), o).error() == errc::invalid_argument));
}

BOOST_AUTO_TEST_SUITE_END()
