// e2b/metrics.hpp against the in-test server: the request (path, start/end
// query, API key), every SandboxMetric field parsed, a wrong-typed field a
// protocol error (never a silent 0), 404 not_found.
#include <prism_e2b/e2b/metrics.hpp>

#include "client_fixture.hpp"
#include "run_coro.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

namespace {

/// Runs one metrics call against `server`.
result<std::vector<e2b::sandbox_metric>> metrics_from(test_http_server& server, e2b::metrics_params p = {})
{
    return run_coro([&](asio::any_io_executor ex) -> asio::awaitable<result<std::vector<e2b::sandbox_metric>>> {
        auto c = e2b::make_client(ex, options_for(server.url()));
        BOOST_TEST_REQUIRE(c.has_value());
        co_return co_await (*c)->async_get_sandbox_metrics("sbx1", p);
    });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_metrics)

BOOST_AUTO_TEST_CASE(parses_every_field_and_sends_the_interval)
{
    test_http_server server([](recorded_request const&) {
        return scripted_response::json(
            200,
            R"([{"timestamp":"2025-01-01T00:00:00Z","timestampUnix":1735689600,"cpuCount":2,"cpuUsedPct":12.5,"memUsed":1048576,"memTotal":4194304,"memCache":4096,"diskUsed":123456789012,"diskTotal":987654321098},)"
            R"({"timestampUnix":1735689605,"cpuCount":2,"cpuUsedPct":0,"memUsed":1,"memTotal":2,"memCache":0,"diskUsed":3,"diskTotal":4}])");
    });
    auto m = metrics_from(server, e2b::metrics_params{1735689600, 1735689700});
    BOOST_TEST_REQUIRE(m.has_value(), (m ? "" : m.error().to_string()));
    BOOST_TEST_REQUIRE(m->size() == 2u);
    auto const& a = m->front();
    BOOST_TEST(a.timestamp_unix == 1735689600);
    BOOST_TEST(a.cpu_count == 2);
    BOOST_TEST(a.cpu_used_pct == 12.5);
    BOOST_TEST(a.mem_used == 1048576);
    BOOST_TEST(a.mem_total == 4194304);
    BOOST_TEST(a.mem_cache == 4096);
    BOOST_TEST(a.disk_used == 123456789012);
    BOOST_TEST(a.disk_total == 987654321098);
    BOOST_TEST(m->back().timestamp_unix == 1735689605);
    auto reqs = server.requests();
    BOOST_TEST_REQUIRE(reqs.size() == 1u);
    BOOST_TEST(reqs[0].method == "GET");
    BOOST_TEST(reqs[0].target == "/sandboxes/sbx1/metrics?start=1735689600&end=1735689700");
    BOOST_TEST(reqs[0].header("X-API-KEY").value_or("") == "e2b_test_key_0123456789");
}

BOOST_AUTO_TEST_CASE(no_interval_no_query_and_an_empty_series)
{
    test_http_server server([](recorded_request const&) { return scripted_response::json(200, "[]"); });
    auto m = metrics_from(server);
    BOOST_TEST_REQUIRE(m.has_value());
    BOOST_TEST(m->empty());
    BOOST_TEST(server.requests().at(0).target == "/sandboxes/sbx1/metrics");
}

BOOST_AUTO_TEST_CASE(bad_bodies_are_protocol_errors_and_404_is_not_found)
{
    for (auto const* body : {R"({"not":"an array"})", R"([{"cpuCount":"two"}])", R"([{"memUsed":1.5}])", R"([1])",
                             R"([{"cpuUsedPct":"high"}])", "not json"}) {
        test_http_server server([body](recorded_request const&) { return scripted_response::json(200, body); });
        auto m = metrics_from(server);
        BOOST_TEST((!m && m.error() == errc::protocol_error), body);
    }
    test_http_server missing([](recorded_request const&) {
        return scripted_response::json(404, R"({"code":404,"message":"sandbox not found"})");
    });
    auto m = metrics_from(missing);
    BOOST_TEST((!m && m.error() == errc::not_found));
}

BOOST_AUTO_TEST_SUITE_END()
