// e2b::client's streamed and batch file transfer against the local server:
// a 64 MiB round trip that never holds more than one chunk, progress, the real
// size of a written file, a batch write, exists, signed /files URLs checked by
// the server, and "unsupported" from a client without these operations.
#include <prism_e2b/e2b/client.hpp>

#include "fake_e2b_client.hpp"
#include "local_server_fixture.hpp"
#include "run_coro.hpp"
#include "sandbox_options.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <cstring>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

namespace {

/// `cap`: the most the client buffers of a body or of a whole-file read (max_response_bytes,
/// max_file_bytes); 0: the defaults.
result<std::shared_ptr<e2b::client>> transfer_client(local_server_fixture const& srv, asio::any_io_executor ex,
                                                     std::size_t cap = 0)
{
    auto o = client_options_for(srv);
    o.domain = "sandboxes.test";
    if (cap != 0) o.max_response_bytes = o.max_file_bytes = cap;
    return e2b::make_client(ex, o);
}

asio::awaitable<std::pair<std::shared_ptr<e2b::client>, e2b::sandbox_handle>> new_transfer_sandbox(
    local_server_fixture const& srv, asio::any_io_executor ex, std::size_t cap = 0)
{
    auto c = transfer_client(srv, ex, cap);
    BOOST_REQUIRE(c);
    e2b::create_sandbox_params cp;
    auto h = co_await (*c)->async_create_sandbox(cp);
    BOOST_REQUIRE_MESSAGE(h, h.error().to_string());
    co_return std::pair{*c, *h};
}

/// Byte `i` of the test file: computed, so neither side needs the whole file.
char byte_at(std::uint64_t i) { return static_cast<char>((i * 2654435761u) >> 13); }

/// A source of `size` computed bytes.
e2b::chunk_source computed_source(std::uint64_t size)
{
    auto pos = std::make_shared<std::uint64_t>(0);
    e2b::chunk_source s;
    s.size = size;
    s.read = [pos, size](std::span<char> buf) -> result<std::size_t> {
        std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - *pos));
        for (std::size_t i = 0; i < n; ++i) buf[i] = byte_at(*pos + i);
        *pos += n;
        return n;
    };
    s.rewind = [pos]() -> result<void> {
        *pos = 0;
        return {};
    };
    return s;
}

/// The path and query of `url` (for a raw request to the same server).
std::string target_of(std::string const& url)
{
    auto const scheme = url.find("://");
    BOOST_REQUIRE(scheme != std::string::npos);
    return url.substr(url.find('/', scheme + 3));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(client_transfer)

BOOST_AUTO_TEST_CASE(large_file_round_trip_holds_one_chunk_at_a_time)
{
    // A file three times what the client holds of a body or a whole-file read: streamed both
    // ways, a chunk at a time, never whole. 12 MiB, not more: 768 chunks each way already, and a
    // TSan build on a loaded machine moves it in about a minute.
    std::size_t const client_cap = 4u << 20;
    local_server_fixture srv([](local::server_options& o) { o.max_file_bytes = 16u << 20; });
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto [c, h] = co_await new_transfer_sandbox(srv, ex, client_cap);
            auto const target = e2b::envd_target::from(h);
            std::uint64_t const size = 12u << 20;
            BOOST_TEST_REQUIRE(size > 2 * client_cap);
            std::size_t const chunk = 16u << 10;

            e2b::transfer_options wo;
            wo.chunk_size = chunk;
            std::uint64_t last_progress = 0;
            std::size_t progress_calls = 0;
            wo.on_progress = [&](e2b::transfer_progress const& p) {
                BOOST_TEST(p.bytes >= last_progress);
                BOOST_TEST((p.total && *p.total == size));
                last_progress = p.bytes;
                ++progress_calls;
            };
            std::string const big = "/home/user/big.bin";
            auto source = computed_source(size);
            auto w = co_await c->async_write_file_stream(target, big, source, wo);
            BOOST_REQUIRE_MESSAGE(w, w.error().to_string());
            BOOST_TEST(w->transfer.bytes == size);
            BOOST_TEST(w->transfer.peak_buffer <= chunk);                  // the client never held more than one chunk
            BOOST_TEST(w->entry.size == static_cast<std::int64_t>(size));  // the real size, from Stat
            BOOST_TEST(w->entry.path == "/home/user/big.bin");
            BOOST_TEST(last_progress == size);
            BOOST_TEST(progress_calls >= size / chunk);

            e2b::transfer_options ro;
            ro.chunk_size = chunk;
            std::uint64_t pos = 0;
            bool same = true;
            std::size_t largest = 0;
            std::optional<std::uint64_t> total;
            ro.on_progress = [&](e2b::transfer_progress const& p) { total = p.total; };
            e2b::chunk_sink sink = [&](std::string_view piece) -> result<void> {
                largest = std::max(largest, piece.size());
                for (char ch : piece) same = same && ch == byte_at(pos++);
                return {};
            };
            auto r = co_await c->async_read_file_stream(target, big, sink, ro);
            BOOST_REQUIRE_MESSAGE(r, r.error().to_string());
            BOOST_TEST(r->bytes == size);
            BOOST_TEST(pos == size);
            BOOST_TEST(same);
            BOOST_TEST(largest <= chunk);
            BOOST_TEST(r->peak_buffer <= std::size_t(64u << 10));  // one transport read, far below the file
            BOOST_TEST((!total || *total == size));                // known when the server sends a Content-Length
        },
        std::chrono::seconds(300));
}

BOOST_AUTO_TEST_CASE(stream_errors_are_typed)
{
    local_server_fixture srv;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto [c, h] = co_await new_transfer_sandbox(srv, ex);
        auto const target = e2b::envd_target::from(h);
        e2b::chunk_sink sink = [](std::string_view) -> result<void> { return {}; };
        e2b::transfer_options defaults;
        std::string const none_path = "/home/user/none.txt", a_path = "/home/user/a.txt";
        auto missing = co_await c->async_read_file_stream(target, none_path, sink, defaults);
        BOOST_TEST((!missing && missing.error() == errc::not_found));

        // A sink that refuses stops the transfer with its own error.
        auto w = co_await c->async_write_file(target, "/home/user/a.txt", std::string(100000, 'a'));
        BOOST_REQUIRE(w);
        e2b::chunk_sink refusing = [](std::string_view) -> result<void> {
            return error(errc::limit_exceeded, "disk full here");
        };
        auto refused = co_await c->async_read_file_stream(target, a_path, refusing, defaults);
        BOOST_TEST((!refused && refused.error() == errc::limit_exceeded));

        // A source that yields fewer bytes than it announced: nothing is claimed written.
        auto src = computed_source(1000);
        src.size = 5000;
        std::string const short_path = "/home/user/short.bin";
        auto short_write = co_await c->async_write_file_stream(target, short_path, src, defaults);
        BOOST_TEST((!short_write && short_write.error() == errc::invalid_argument));

        e2b::transfer_options tiny;
        tiny.chunk_size = 10;
        auto bad = co_await c->async_read_file_stream(target, a_path, sink, tiny);
        BOOST_TEST((!bad && bad.error() == errc::invalid_argument));
    });
}

BOOST_AUTO_TEST_CASE(write_file_reports_the_real_size)
{
    local_server_fixture srv;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto [c, h] = co_await new_transfer_sandbox(srv, ex);
        auto w = co_await c->async_write_file(e2b::envd_target::from(h), "/home/user/s.txt", std::string(12345, 'x'));
        BOOST_REQUIRE(w);
        BOOST_TEST(w->size == 12345);
        BOOST_TEST((w->type == e2b::file_type::file));
    });
}

BOOST_AUTO_TEST_CASE(batch_write_and_exists)
{
    local_server_fixture srv;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto [c, h] = co_await new_transfer_sandbox(srv, ex);
        auto const target = e2b::envd_target::from(h);
        std::vector<e2b::file_write> files{{"/home/user/one.txt", "1"},
                                           {"/home/user/dir/two.txt", std::string(70000, '2')},
                                           {"/tmp/three \"q\".txt", "three"}};
        auto w = co_await c->async_write_files(target, files);
        BOOST_REQUIRE_MESSAGE(w, w.error().to_string());
        BOOST_REQUIRE_EQUAL(w->size(), 3u);
        BOOST_TEST((*w)[0].path == "/home/user/one.txt");
        BOOST_TEST((*w)[0].size == 1);
        BOOST_TEST((*w)[1].size == 70000);
        for (auto const& f : files) {
            if (f.path.find('"') != std::string::npos) continue;  // the name's quotes are replaced on the wire
            auto back = co_await c->async_read_file(target, f.path);
            BOOST_REQUIRE(back);
            BOOST_TEST(*back == f.data);
        }
        std::string const two = "/home/user/dir/two.txt", dir_path = "/home/user/dir", nothing = "/home/user/nothing";
        auto yes = co_await c->async_exists(target, two);
        BOOST_TEST((yes && *yes));
        auto dir = co_await c->async_exists(target, dir_path);
        BOOST_TEST((dir && *dir));
        auto no = co_await c->async_exists(target, nothing);
        BOOST_TEST((no && !*no));
        std::vector<e2b::file_write> none;
        auto empty = co_await c->async_write_files(target, none);
        BOOST_TEST((empty && empty->empty()));
        // A sandbox that is gone: an error, never "does not exist".
        auto killed = co_await c->async_kill_sandbox(h.sandbox_id);
        BOOST_REQUIRE(killed);
        auto gone = co_await c->async_exists(target, two);
        BOOST_TEST(!gone);
    });
}

BOOST_AUTO_TEST_CASE(signed_urls_are_accepted_by_the_server_without_the_token)
{
    local_server_fixture srv;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto [c, h] = co_await new_transfer_sandbox(srv, ex);
        auto const target = e2b::envd_target::from(h);
        BOOST_REQUIRE(target.access_token);
        auto w = co_await c->async_write_file(target, "/home/user/dl.txt", std::string("signed content"));
        BOOST_REQUIRE(w);

        auto url = c->file_url(target, "/home/user/dl.txt");
        BOOST_REQUIRE_MESSAGE(url, url.error().to_string());
        BOOST_TEST(url->find(*target.access_token) == std::string::npos);  // the token itself never appears
        BOOST_TEST(url->find("signature=v1_") != std::string::npos);
        raw_http http(srv.port());
        auto got = http.request("GET", target_of(*url));
        BOOST_TEST(got.status == 200);
        BOOST_TEST(got.body == "signed content");

        // A read URL does not allow a write, and a changed path breaks the signature.
        auto as_write = http.request("POST", target_of(*url), "x", {{"Content-Type", "application/octet-stream"}});
        BOOST_TEST(as_write.status == 401);
        std::string other = target_of(*url);
        other.replace(other.find("dl.txt"), 6, "xx.txt");
        BOOST_TEST(http.request("GET", other).status == 401);

        e2b::file_url_options up;
        up.operation = e2b::file_operation::write;
        up.expires_in = std::chrono::seconds(300);
        auto upload = c->file_url(target, "/home/user/up load.txt", up);
        BOOST_REQUIRE(upload);
        BOOST_TEST(upload->find("signature_expiration=") != std::string::npos);
        auto posted =
            http.request("POST", target_of(*upload), "uploaded", {{"Content-Type", "application/octet-stream"}});
        BOOST_TEST(posted.status == 200);
        auto back = co_await c->async_read_file(target, "/home/user/up load.txt");
        BOOST_TEST((back && *back == "uploaded"));

        e2b::file_url_options expired;
        expired.expires_in = std::chrono::seconds(-60);
        auto old = c->file_url(target, "/home/user/dl.txt", expired);
        BOOST_REQUIRE(old);
        BOOST_TEST(http.request("GET", target_of(*old)).status == 401);

        // No token: an unsigned URL, and no expiry can be asked.
        auto open_target = target;
        open_target.access_token.reset();
        auto unsigned_url = c->file_url(open_target, "/a");
        BOOST_TEST((unsigned_url && unsigned_url->find("signature") == std::string::npos));
        auto no_expiry = c->file_url(open_target, "/a", up);
        BOOST_TEST((!no_expiry && no_expiry.error() == errc::invalid_argument));
    });
}

BOOST_AUTO_TEST_CASE(get_host_is_built_as_the_sdk_builds_it)
{
    local_server_fixture srv;
    asio::io_context ioc;
    auto c = transfer_client(srv, ioc.get_executor());
    BOOST_REQUIRE(c);
    e2b::envd_target t;
    t.sandbox_id = "abc123";
    auto host = (*c)->get_host(t, 3000);
    BOOST_TEST((host && *host == "3000-abc123.sandboxes.test"));
    t.domain = "own.example";
    host = (*c)->get_host(t, 8080);
    BOOST_TEST((host && *host == "8080-abc123.own.example"));
    t.sandbox_id = "bad.id/x";
    host = (*c)->get_host(t, 80);
    BOOST_TEST((!host && host.error() == errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(another_client_answers_unsupported)
{
    asio::io_context ioc;
    fake_e2b_client fake(ioc.get_executor());
    e2b::envd_target t;
    t.sandbox_id = "x";
    auto fut = fake.async_exists(t, "/a", asio::bind_executor(ioc, asio::use_future));
    auto snap = fake.async_list_snapshots({}, asio::bind_executor(ioc, asio::use_future));
    ioc.run();
    auto r = fut.get();
    BOOST_TEST((!r && r.error() == errc::unsupported));
    auto s = snap.get();
    BOOST_TEST((!s && s.error() == errc::unsupported));
    auto url = fake.file_url(t, "/a");
    BOOST_TEST((!url && url.error() == errc::unsupported));
}

BOOST_AUTO_TEST_SUITE_END()
