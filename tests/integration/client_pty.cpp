// e2b/pty.hpp against the local server: a process on a pty of the given size,
// keystrokes in, output out, resize, re-attach, kill; any completion token;
// bad sizes refused before a request; another client answers "unsupported".
#include <prism_e2b/e2b/pty.hpp>

#include "fake_e2b_client.hpp"
#include "local_server_fixture.hpp"
#include "run_coro.hpp"
#include "sandbox_options.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

namespace {

/// A client of `srv` and a new sandbox on it.
asio::awaitable<std::pair<std::shared_ptr<e2b::client>, e2b::sandbox_handle>> new_pty_sandbox(
    local_server_fixture const& srv, asio::any_io_executor ex)
{
    auto c = e2b::make_client(ex, client_options_for(srv));
    BOOST_REQUIRE(c);
    e2b::create_sandbox_params cp;
    auto h = co_await (*c)->async_create_sandbox(cp);
    BOOST_REQUIRE(h);
    co_return std::pair{*c, *h};
}

/// Reads pty output until it contains `text`; false when the stream ended first.
asio::awaitable<bool> read_pty_until(e2b::process_event_stream& s, std::string const& text, std::string& seen,
                                     std::optional<e2b::end_event>* end = nullptr)
{
    for (;;) {
        if (seen.find(text) != std::string::npos) co_return true;
        auto ev = co_await s.async_next();
        if (!ev || !*ev) co_return false;
        if (auto const* d = std::get_if<e2b::data_event>(&**ev)) {
            BOOST_TEST((d->stream == e2b::data_event::stream_kind::pty));
            seen += d->bytes;
        } else if (auto const* e = std::get_if<e2b::end_event>(&**ev)) {
            if (end) *end = *e;
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(client_pty)

BOOST_AUTO_TEST_CASE(start_input_resize_connect_kill)
{
    local_server_fixture srv;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto [c, h] = co_await new_pty_sandbox(srv, ex);
        auto const target = e2b::envd_target::from(h);

        e2b::pty_start_params p;
        p.process = {"/bin/sh", {"-c", "stty size; read line; echo got-$line; stty size; read x; echo never"}, {}, {}};
        p.size = {50, 20};
        p.tag = "term-1";
        auto s = co_await c->async_start_pty(target, p);
        BOOST_REQUIRE_MESSAGE(s, s.error().to_string());
        auto first = co_await (*s)->async_next();
        BOOST_REQUIRE(first && *first);
        auto const* st = std::get_if<e2b::start_event>(&**first);
        BOOST_REQUIRE(st);
        e2b::process_selector sel;
        sel.pid = st->pid;

        std::string seen;
        BOOST_TEST(co_await read_pty_until(**s, "20 50", seen), seen);  // rows cols, as Start asked
        // Resize before the line: the second stty answers the new size.
        e2b::pty_size const bigger{120, 40};
        auto rs = co_await c->async_resize_pty(target, sel, bigger);
        BOOST_TEST(rs.has_value(), (rs ? "" : rs.error().to_string()));
        auto in = co_await c->async_send_pty_input(target, sel, std::string("abc\r"));
        BOOST_TEST(in.has_value(), (in ? "" : in.error().to_string()));
        BOOST_TEST(co_await read_pty_until(**s, "got-abc", seen), seen);
        BOOST_TEST(co_await read_pty_until(**s, "40 120", seen), seen);

        // Re-attach by tag while the first stream is still open, then kill.
        e2b::process_selector by_tag;
        by_tag.tag = "term-1";
        auto again = co_await c->async_connect_pty(target, by_tag);
        BOOST_REQUIRE_MESSAGE(again, again.error().to_string());
        auto k = co_await c->async_kill_pty(target, sel);
        BOOST_TEST(k.has_value());
        std::optional<e2b::end_event> end;
        std::string rest;
        BOOST_TEST(!co_await read_pty_until(**again, "never", rest, &end));
        BOOST_REQUIRE(end);
        BOOST_TEST(!end->exited);  // killed, not exited
        auto gone = co_await c->async_kill_pty(target, sel);
        BOOST_TEST((!gone && gone.error() == errc::not_found));
        co_await c->async_kill_sandbox(h.sandbox_id);
    });
}

BOOST_AUTO_TEST_CASE(bad_sizes_are_refused_before_any_request)
{
    local_server_fixture srv;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto [c, h] = co_await new_pty_sandbox(srv, ex);
        auto const target = e2b::envd_target::from(h);
        for (auto size : {e2b::pty_size{0, 24}, e2b::pty_size{80, 0}, e2b::pty_size{1001, 24}}) {
            e2b::pty_start_params p;
            p.size = size;
            auto s = co_await c->async_start_pty(target, p);
            BOOST_TEST((!s && s.error() == errc::invalid_argument));
            e2b::process_selector sel;
            sel.pid = 1;
            auto r = co_await c->async_resize_pty(target, sel, size);
            BOOST_TEST((!r && r.error() == errc::invalid_argument));
        }
        co_await c->async_kill_sandbox(h.sandbox_id);
    });
}

BOOST_AUTO_TEST_CASE(any_completion_token_and_other_clients)
{
    local_server_fixture srv;
    asio::io_context ioc;
    auto c = client_for(srv, ioc.get_executor());
    // A plain callback: completes on the io_context with the error of an unknown pid.
    e2b::envd_target t;
    t.sandbox_id = "nosuchsandbox";
    std::optional<result<void>> got;
    e2b::process_selector sel;
    sel.pid = 4242;
    c->async_resize_pty(t, sel, e2b::pty_size{80, 24}, [&](result<void> r) { got = std::move(r); });
    BOOST_TEST(!got.has_value());  // never inside the initiating call
    ioc.run();
    BOOST_REQUIRE(got.has_value());
    BOOST_TEST(!got->has_value());

    // A client other than make_client()'s: unsupported, through a future this time.
    ioc.restart();
    fake_e2b_client fake(ioc.get_executor());
    auto fut = fake.async_start_pty(t, e2b::pty_start_params{}, asio::bind_executor(ioc, asio::use_future));
    ioc.run();
    auto r = fut.get();
    BOOST_TEST((!r && r.error() == errc::unsupported));
}

BOOST_AUTO_TEST_SUITE_END()
