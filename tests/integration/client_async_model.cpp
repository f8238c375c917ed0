// e2b::client in the universal async model (issue 12) against the in-process
// local server: the same operations completed through use_future, a plain
// callback, deferred (alone and in a parallel_group) and co_await, and
// per-operation cancellation bound straight to the token, on a control-plane
// and on an envd operation, and a process stream's async_next() in each token.
#include <prism_e2b/e2b/client.hpp>

#include "client_thread.hpp"
#include "local_server_fixture.hpp"
#include "run_coro.hpp"
#include "sandbox_options.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <future>
#include <optional>
#include <string>
#include <variant>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

namespace {

constexpr auto test_deadline = std::chrono::seconds(60);
/// Longer than test_deadline: a request delayed this long can only end by cancellation.
constexpr auto forever = std::chrono::seconds(600);

template <class T>
T ready(std::future<T>& f)
{
    BOOST_TEST_REQUIRE((f.wait_for(test_deadline) == std::future_status::ready));
    return f.get();
}

/// A new sandbox, created through use_future (the setup of the cases below).
e2b::sandbox_handle create_sandbox_now(e2b::client& c)
{
    e2b::create_sandbox_params p;
    auto created_f = c.async_create_sandbox(p, asio::use_future);
    auto created = ready(created_f);
    BOOST_TEST_REQUIRE(created.has_value(), (created ? "" : created.error().to_string()));
    return *created;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_client_async_model)

BOOST_AUTO_TEST_CASE(use_future_from_a_plain_thread)
{
    local_server_fixture srv;
    client_thread t;
    auto c = client_for(srv, t.ioc.get_executor());

    e2b::create_sandbox_params p;
    auto created_f = c->async_create_sandbox(p, asio::use_future);
    auto created = ready(created_f);
    BOOST_TEST_REQUIRE(created.has_value(), (created ? "" : created.error().to_string()));

    auto info_f = c->async_get_sandbox_info(created->sandbox_id, asio::use_future);
    auto info = ready(info_f);
    BOOST_TEST_REQUIRE(info.has_value(), (info ? "" : info.error().to_string()));
    BOOST_TEST(info->sandbox_id == created->sandbox_id);

    auto killed_f = c->async_kill_sandbox(created->sandbox_id, asio::use_future);
    auto killed = ready(killed_f);
    BOOST_TEST_REQUIRE(killed.has_value());
    BOOST_TEST(*killed == true);
    // Errors are values: a second kill is false (404), info is errc::not_found.
    auto again_f = c->async_kill_sandbox(created->sandbox_id, asio::use_future);
    auto again = ready(again_f);
    BOOST_TEST_REQUIRE(again.has_value());
    BOOST_TEST(*again == false);
    auto gone_f = c->async_get_sandbox_info(created->sandbox_id, asio::use_future);
    auto gone = ready(gone_f);
    BOOST_TEST((!gone && gone.error() == errc::not_found));
}

BOOST_AUTO_TEST_CASE(plain_callback_runs_on_the_client_executor)
{
    local_server_fixture srv;
    client_thread t;
    auto c = client_for(srv, t.ioc.get_executor());
    auto const created = create_sandbox_now(*c);
    auto const target = e2b::envd_target::from(created);

    std::promise<result<bool>> done;
    std::atomic<bool> on_client_executor{false};
    c->async_health(target, [&](result<bool> r) {
        on_client_executor = t.ioc.get_executor().running_in_this_thread();
        done.set_value(std::move(r));
    });
    auto fut = done.get_future();
    auto healthy = ready(fut);
    BOOST_TEST_REQUIRE(healthy.has_value(), (healthy ? "" : healthy.error().to_string()));
    BOOST_TEST(*healthy == true);
    // A handler with no associated executor completes on the client's executor,
    // never inside the initiating call (this thread is not the client's).
    BOOST_TEST(on_client_executor.load());

    auto killed_f = c->async_kill_sandbox(created.sandbox_id, asio::use_future);
    BOOST_TEST(ready(killed_f).has_value());
}

BOOST_AUTO_TEST_CASE(deferred_owns_its_arguments_and_composes)
{
    local_server_fixture srv;
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto c = client_for(srv, ex);
            e2b::create_sandbox_params p;
            auto created = co_await c->async_create_sandbox(p);
            BOOST_TEST_REQUIRE(created.has_value(), (created ? "" : created.error().to_string()));
            auto const target = e2b::envd_target::from(*created);

            // The path and data die before the operation is launched: the deferred
            // operation holds its own copies (ASan would see a dangling one).
            auto write = [&] {
                std::string path = "/tmp/deferred-" + random_token(4);
                std::string data = "written later";
                return c->async_write_file(target, path, std::move(data), asio::deferred);
            }();
            auto w = co_await std::move(write)(asio::use_awaitable);
            BOOST_TEST_REQUIRE(w.has_value(), (w ? "" : w.error().to_string()));
            auto back = co_await c->async_read_file(target, w->path);
            BOOST_TEST_REQUIRE(back.has_value(), (back ? "" : back.error().to_string()));
            BOOST_TEST(*back == "written later");

            // Two deferred operations in one parallel_group.
            auto [order, info, stat] = co_await asio::experimental::make_parallel_group(
                                           c->async_get_sandbox_info(created->sandbox_id, asio::deferred),
                                           c->async_stat(target, w->path, asio::deferred))
                                           .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
            BOOST_TEST(order.size() == 2u);
            BOOST_TEST_REQUIRE(info.has_value(), (info ? "" : info.error().to_string()));
            BOOST_TEST(info->sandbox_id == created->sandbox_id);
            BOOST_TEST_REQUIRE(stat.has_value(), (stat ? "" : stat.error().to_string()));
            BOOST_TEST(stat->size == 13);

            auto k = co_await c->async_kill_sandbox(created->sandbox_id);
            BOOST_TEST(k.has_value());
        },
        test_deadline);
}

// bind_cancellation_slot on the token reaches the operation directly: a
// request the server holds for longer than the test may run completes with
// errc::cancelled, and the client keeps working afterwards.
BOOST_AUTO_TEST_CASE(per_operation_cancellation_on_control_plane_and_envd)
{
    local_server_fixture srv;
    client_thread t;
    auto c = client_for(srv, t.ioc.get_executor());
    auto const created = create_sandbox_now(*c);
    auto const id = created.sandbox_id;
    auto const target = e2b::envd_target::from(created);

    {  // control plane: GET /sandboxes/{id}
        srv.server().faults().add_latency("/sandboxes/" + id, forever);
        asio::cancellation_signal sig;
        std::promise<result<e2b::sandbox_info>> done;
        c->async_get_sandbox_info(id, asio::bind_cancellation_slot(sig.slot(), [&](result<e2b::sandbox_info> r) {
                                      done.set_value(std::move(r));
                                  }));
        // Emit on the executor the operation's slot is used from.
        asio::post(t.ioc, [&] { sig.emit(asio::cancellation_type::terminal); });
        auto fut = done.get_future();
        auto r = ready(fut);
        BOOST_TEST((!r && r.error() == errc::cancelled), (r ? "completed" : r.error().to_string()));
        srv.server().faults().add_latency("/sandboxes/" + id, std::chrono::milliseconds(0));
    }
    {  // envd: process.Process/List
        srv.server().faults().add_latency("/process.Process/List", forever);
        asio::cancellation_signal sig;
        std::promise<result<std::vector<e2b::process_info>>> done;
        c->async_list_processes(
            target, asio::bind_cancellation_slot(
                        sig.slot(), [&](result<std::vector<e2b::process_info>> r) { done.set_value(std::move(r)); }));
        asio::post(t.ioc, [&] { sig.emit(asio::cancellation_type::terminal); });
        auto fut = done.get_future();
        auto r = ready(fut);
        BOOST_TEST((!r && r.error() == errc::cancelled), (r ? "completed" : r.error().to_string()));
        srv.server().faults().add_latency("/process.Process/List", std::chrono::milliseconds(0));
    }

    // Still usable: both routes answer again.
    auto info_f = c->async_get_sandbox_info(id, asio::use_future);
    BOOST_TEST(ready(info_f).has_value());
    auto list_f = c->async_list_processes(target, asio::use_future);
    BOOST_TEST(ready(list_f).has_value());
    auto killed_f = c->async_kill_sandbox(id, asio::use_future);
    BOOST_TEST(ready(killed_f).has_value());
}

// A process stream's async_next() in every token: use_future, a plain callback
// (on the client's executor), deferred, and per-operation cancellation bound to
// a callback's token (terminal: the stream stays cancelled).
BOOST_AUTO_TEST_CASE(process_stream_async_next_with_every_token)
{
    local_server_fixture srv;
    client_thread t;
    auto c = client_for(srv, t.ioc.get_executor());
    auto const created = create_sandbox_now(*c);
    auto const target = e2b::envd_target::from(created);
    using next_result = result<std::optional<e2b::process_event>>;

    {
        e2b::start_process_params p;
        p.process.cmd = "/bin/sh";
        p.process.args = {"-c", "echo one; sleep 0.2; echo two"};
        auto started_f = c->async_start_process(target, p, asio::use_future);
        auto s = ready(started_f);
        BOOST_TEST_REQUIRE(s.has_value(), (s ? "" : s.error().to_string()));

        // use_future: the start event.
        auto first_f = (*s)->async_next(asio::use_future);
        auto first = ready(first_f);
        BOOST_TEST_REQUIRE(first.has_value(), (first ? "" : first.error().to_string()));
        BOOST_TEST_REQUIRE(first->has_value());
        BOOST_TEST(std::holds_alternative<e2b::start_event>(**first));

        // A plain callback, with no associated executor: on the client's executor.
        std::promise<next_result> done;
        std::atomic<bool> on_client_executor{false};
        (*s)->async_next([&](next_result r) {
            on_client_executor = t.ioc.get_executor().running_in_this_thread();
            done.set_value(std::move(r));
        });
        auto second_f = done.get_future();
        auto second = ready(second_f);
        BOOST_TEST_REQUIRE(second.has_value(), (second ? "" : second.error().to_string()));
        BOOST_TEST_REQUIRE(second->has_value());
        BOOST_TEST(on_client_executor.load());
        std::string out;
        if (auto const* d = std::get_if<e2b::data_event>(&**second)) out += d->bytes;

        // deferred: each read launched later, until the clean end of the stream.
        bool saw_end = false;
        for (int i = 0; i < 100; ++i) {
            auto op = (*s)->async_next(asio::deferred);
            auto f = std::move(op)(asio::use_future);
            auto ev = ready(f);
            BOOST_TEST_REQUIRE(ev.has_value(), (ev ? "" : ev.error().to_string()));
            if (!*ev) break;
            if (auto const* d = std::get_if<e2b::data_event>(&**ev)) out += d->bytes;
            if (auto const* end = std::get_if<e2b::end_event>(&**ev)) {
                saw_end = true;
                BOOST_TEST(end->exit_code == 0);
            }
        }
        BOOST_TEST(saw_end);
        BOOST_TEST(out == "one\ntwo\n");
        // After the end every read is the clean end again.
        auto again_f = (*s)->async_next(asio::use_future);
        auto again = ready(again_f);
        BOOST_TEST_REQUIRE(again.has_value(), (again ? "" : again.error().to_string()));
        BOOST_TEST(!again->has_value());
    }
    {
        e2b::start_process_params p;
        p.process.cmd = "sleep";
        p.process.args = {"600"};
        p.timeout = std::chrono::milliseconds(0);
        auto started_f = c->async_start_process(target, p, asio::use_future);
        auto s = ready(started_f);
        BOOST_TEST_REQUIRE(s.has_value(), (s ? "" : s.error().to_string()));
        auto first_f = (*s)->async_next(asio::use_future);
        auto first = ready(first_f);
        BOOST_TEST_REQUIRE(first.has_value(), (first ? "" : first.error().to_string()));

        asio::cancellation_signal sig;
        std::promise<next_result> done;
        (*s)->async_next(
            asio::bind_cancellation_slot(sig.slot(), [&](next_result r) { done.set_value(std::move(r)); }));
        asio::post(t.ioc, [&] { sig.emit(asio::cancellation_type::terminal); });
        auto cut_f = done.get_future();
        auto cut = ready(cut_f);
        BOOST_TEST((!cut && cut.error() == errc::cancelled), (cut ? "completed" : cut.error().to_string()));
        // Terminal: the stream is unusable afterwards.
        auto after_f = (*s)->async_next(asio::use_future);
        auto after = ready(after_f);
        BOOST_TEST((!after && after.error() == errc::cancelled), (after ? "completed" : after.error().to_string()));
    }

    auto killed_f = c->async_kill_sandbox(created.sandbox_id, asio::use_future);
    BOOST_TEST(ready(killed_f).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
