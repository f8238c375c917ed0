// The issue-14 client calls against the in-test server, where the exact request
// or a status matters: a streamed read cut short is unknown_outcome (never a
// short success); a streamed write is sent with its Content-Length, piece by
// piece, and a 429 is returned rather than replayed; the batch write's parts;
// 501 on the network update is unsupported; snapshot, logs and list-filter
// queries as the API spells them; the SDK's signature of a known input.
#include <prism_e2b/e2b/client.hpp>

#include "client_fixture.hpp"
#include "run_coro.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

namespace {

template <class T, class Body>
result<T> with_client(test_http_server& server, Body body)
{
    return run_coro([&](asio::any_io_executor ex) -> asio::awaitable<result<T>> {
        auto c = e2b::make_client(ex, options_for(server.url()));
        BOOST_TEST_REQUIRE(c.has_value());
        co_return co_await body(**c);
    });
}

e2b::chunk_source string_source(std::shared_ptr<std::string> data)
{
    auto pos = std::make_shared<std::size_t>(0);
    e2b::chunk_source s;
    s.size = data->size();
    s.read = [data, pos](std::span<char> buf) -> result<std::size_t> {
        auto const n = std::min(buf.size(), data->size() - *pos);
        std::copy_n(data->data() + *pos, n, buf.data());
        *pos += n;
        return n;
    };
    s.rewind = [pos]() -> result<void> {
        *pos = 0;
        return {};
    };
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(client_additions)

BOOST_AUTO_TEST_CASE(a_streamed_read_cut_short_is_unknown_outcome)
{
    test_http_server server([](recorded_request const&) {
        scripted_response r;
        r.raw = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nContent-Type: application/octet-stream\r\n\r\n" +
                std::string(5000, 'x');
        r.close = true;
        return r;
    });
    std::size_t received = 0;
    auto r = with_client<e2b::transfer_summary>(server, [&](e2b::client& c) {
        e2b::chunk_sink sink = [&](std::string_view p) -> result<void> {
            received += p.size();
            return {};
        };
        e2b::transfer_options o;
        std::string const path = "/a b.txt";
        return c.async_read_file_stream(target_for(), path, sink, o);
    });
    BOOST_TEST(!r);
    BOOST_TEST(received <= 5000u);
    BOOST_TEST(server.requests().at(0).target == "/files?path=%2Fa%20b.txt");
    BOOST_TEST(server.requests().at(0).header("X-Access-Token").value_or("") == "envd-token-abcdef");
}

BOOST_AUTO_TEST_CASE(a_streamed_write_sends_content_length_and_is_not_replayed_on_429)
{
    int calls = 0;
    test_http_server server([&](recorded_request const& req) {
        ++calls;
        if (req.path() == "/files") return scripted_response::json(429, R"({"code":429,"message":"slow down"})");
        return scripted_response::json(200, "{}");
    });
    auto data = std::make_shared<std::string>(300000, 'q');
    auto r = with_client<e2b::streamed_write>(server, [&](e2b::client& c) {
        e2b::transfer_options o;
        o.chunk_size = 4096;
        o.user = "root";
        std::string const path = "/tmp/w.bin";
        return c.async_write_file_stream(target_for(), path, string_source(data), o);
    });
    BOOST_TEST((!r && r.error() == errc::rate_limited));
    BOOST_TEST(calls == 1);  // a consumed stream is not replayed
    auto const req = server.requests().at(0);
    BOOST_TEST(req.method == "POST");
    BOOST_TEST(req.target == "/files?path=%2Ftmp%2Fw.bin&username=root");
    BOOST_TEST(req.header("Content-Length").value_or("") == "300000");
    BOOST_TEST(req.header("Content-Type").value_or("") == "application/octet-stream");
    BOOST_TEST((req.body == *data));
}

BOOST_AUTO_TEST_CASE(an_old_envd_gets_one_multipart_part_and_the_entry_comes_from_stat)
{
    test_http_server server([](recorded_request const& req) {
        if (req.path() == "/files")
            return scripted_response::json(200, R"([{"name":"w.bin","type":"file","path":"/tmp/w.bin"}])");
        return scripted_response::json(
            200, R"({"entry":{"name":"w.bin","type":"FILE_TYPE_FILE","path":"/tmp/w.bin","size":"11"}})");
    });
    auto data = std::make_shared<std::string>("hello world");
    auto r = with_client<e2b::streamed_write>(server, [&](e2b::client& c) {
        e2b::transfer_options o;
        std::string const path = "/tmp/w.bin";
        return c.async_write_file_stream(target_for("0.5.0"), path, string_source(data), o);
    });
    BOOST_TEST_REQUIRE(r.has_value(), (r ? "" : r.error().to_string()));
    BOOST_TEST(r->entry.size == 11);
    BOOST_TEST(r->transfer.bytes == 11u);
    auto const reqs = server.requests();
    BOOST_TEST_REQUIRE(reqs.size() == 2u);
    BOOST_TEST(reqs[0].header("Content-Type").value_or("").rfind("multipart/form-data; boundary=", 0) == 0u);
    BOOST_TEST(reqs[0].body.find(
                   "filename=\"/tmp/w.bin\"\r\nContent-Type: application/octet-stream\r\n\r\nhello world\r\n--") !=
               std::string::npos);
    BOOST_TEST(reqs[0].header("Content-Length").value_or("") == std::to_string(reqs[0].body.size()));
    BOOST_TEST(reqs[1].path() == "/filesystem.Filesystem/Stat");
}

BOOST_AUTO_TEST_CASE(batch_write_sends_one_part_per_file)
{
    test_http_server server([](recorded_request const& req) {
        if (req.path() == "/files")
            return scripted_response::json(
                200, R"([{"name":"a","type":"file","path":"/a"},{"name":"b","type":"file","path":"/b"}])");
        return scripted_response::json(503, R"({"code":"unavailable","message":"stat is down"})");
    });
    auto r = with_client<std::vector<e2b::entry_info>>(server, [&](e2b::client& c) {
        std::vector<e2b::file_write> files{{"/a", "AAA"}, {"/b", "BB"}};
        return c.async_write_files(target_for(), files);
    });
    BOOST_TEST_REQUIRE(r.has_value(), (r ? "" : r.error().to_string()));
    BOOST_TEST(r->size() == 2u);
    BOOST_TEST((*r)[1].path == "/b");  // Stat failed: the upload's own entry, the write is not reported as failed
    auto const req = server.requests().at(0);
    BOOST_TEST(req.target == "/files");
    BOOST_TEST(req.body.find("filename=\"/a\"") != std::string::npos);
    BOOST_TEST(req.body.find("filename=\"/b\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(network_501_is_unsupported_and_the_body_is_the_apis)
{
    test_http_server server(
        [](recorded_request const&) { return scripted_response::json(501, R"({"code":501,"message":"not here"})"); });
    auto r = with_client<void>(server, [&](e2b::client& c) {
        e2b::network_update u;
        u.allow_out = {"8.8.8.8/32"};
        u.allow_internet_access = false;
        std::string const id = "sbx1";
        return c.async_update_network(id, u);
    });
    BOOST_TEST((!r && r.error() == errc::unsupported));
    auto const req = server.requests().at(0);
    BOOST_TEST(req.method == "PUT");
    BOOST_TEST(req.target == "/sandboxes/sbx1/network");
    BOOST_TEST(req.body == R"({"allowOut":["8.8.8.8/32"],"allow_internet_access":false})");
}

BOOST_AUTO_TEST_CASE(queries_as_the_api_spells_them)
{
    test_http_server server([](recorded_request const& req) {
        if (req.path() == "/snapshots") {
            auto r = scripted_response::json(200, R"([{"snapshotID":"t1:default","names":["team/s:default"]}])");
            r.headers.emplace_back("X-Next-Token", "next-1");
            return r;
        }
        if (req.path().find("/logs") != std::string::npos)
            return scripted_response::json(
                200,
                R"({"logs":[{"timestamp":"2025-01-01T00:00:00Z","level":"warn","message":"m","fields":{"k":"v"}}]})");
        return scripted_response::json(200, "[]");
    });
    auto snaps = with_client<e2b::snapshot_page>(server, [&](e2b::client& c) {
        e2b::snapshot_list_params p;
        p.sandbox_id = "sbx1";
        p.name = "my snap";
        p.limit = 5;
        return c.async_list_snapshots(p);
    });
    BOOST_TEST_REQUIRE(snaps.has_value());
    BOOST_TEST(snaps->snapshots.at(0).snapshot_id == "t1:default");
    BOOST_TEST(snaps->snapshots.at(0).names.at(0) == "team/s:default");
    BOOST_TEST(snaps->next_token.value_or("") == "next-1");
    BOOST_TEST(server.requests().back().target == "/snapshots?sandboxID=sbx1&name=my%20snap&limit=5");

    auto logs = with_client<std::vector<e2b::sandbox_log_entry>>(server, [&](e2b::client& c) {
        e2b::logs_params p;
        p.cursor = 1000;
        p.limit = 10;
        p.backward = true;
        p.level = "warn";
        p.search = "a&b";
        std::string const id = "sbx1";
        return c.async_get_sandbox_logs(id, p);
    });
    BOOST_TEST_REQUIRE(logs.has_value());
    BOOST_TEST(logs->at(0).fields.at("k") == "v");
    BOOST_TEST(server.requests().back().target ==
               "/v2/sandboxes/sbx1/logs?cursor=1000&limit=10&direction=backward&level=warn&search=a%26b");

    auto page = with_client<e2b::sandbox_page>(server, [&](e2b::client& c) {
        e2b::list_params p;
        p.template_id = "base";
        p.started_after = "2025-01-01T00:00:00Z";
        p.ascending = true;
        return c.async_list_sandboxes(p);
    });
    BOOST_TEST_REQUIRE(page.has_value());
    BOOST_TEST(server.requests().back().target ==
               "/v2/sandboxes?template=base&startedAfter=2025-01-01T00%3A00%3A00Z&order=asc");
}

BOOST_AUTO_TEST_CASE(file_url_signature_matches_the_sdk)
{
    // Expected value computed with the SDK's algorithm (signature.ts):
    // "v1_" + base64(sha256("/home/user/a b.txt:read:user:envd-token-abcdef")) without padding.
    test_http_server server([](recorded_request const&) { return scripted_response::empty(200); });
    asio::io_context ioc;
    auto c = e2b::make_client(ioc.get_executor(), options_for(server.url()));
    BOOST_TEST_REQUIRE(c.has_value());
    e2b::file_url_options o;
    o.user = "user";
    auto url = (*c)->file_url(target_for(), "/home/user/a b.txt", o);
    BOOST_TEST_REQUIRE(url.has_value());
    BOOST_TEST(*url == server.url() +
                           "/files?username=user&path=%2Fhome%2Fuser%2Fa+b.txt&signature=v1_tOIYNX7%"
                           "2F1z6UImtl1lea95FWsgB2DlHKmobpwwdPb4Y");
}

BOOST_AUTO_TEST_SUITE_END()
