// The adapter's files() and pty() capabilities, `user` on exec, and the
// client's WatchDir stream, against the in-process local server with real
// processes and a real filesystem.
#include <prism_e2b/e2b_sandbox.hpp>

#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "run_coro.hpp"
#include "sandbox_options.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <mutex>
#include <set>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

namespace {

// Requests are built by plain functions: g++ 12 double-destroys braced
// temporaries (initializer lists included) inside a coroutine.
e2b_sandbox_options with_tmp_root(local_server_fixture& f)
{
    auto o = server_options(f);
    o.file_roots.push_back("/tmp");
    return o;
}

terminal_request sh_terminal(std::string script, std::uint32_t cols, std::uint32_t rows)
{
    terminal_request r;
    r.file = "/bin/sh";
    r.args = {"-c", std::move(script)};
    r.size.cols = cols;
    r.size.rows = rows;
    return r;
}

asio::awaitable<std::shared_ptr<e2b_sandbox>> new_sandbox(local_server_fixture& f, asio::any_io_executor ex)
{
    auto o = with_tmp_root(f);
    auto sb = co_await async_create_e2b_sandbox(ex, std::move(o));
    BOOST_TEST_REQUIRE(sb.has_value(), (sb ? "" : sb.error().to_string()));
    co_return *sb;
}

/// Runs `script` with /bin/sh as `user` (empty: the default) and returns trimmed stdout or the error.
asio::awaitable<std::string> sh_as(e2b_sandbox& sb, std::string script, std::optional<std::string> user)
{
    exec_request r = exec_request::shell(std::move(script));
    r.user = std::move(user);
    auto out = co_await sb.async_exec(r);
    if (!out) co_return "<error: " + out.error().to_string() + ">";
    auto s = out->stdout_data;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    co_return s;
}

/// Reads a terminal until its output holds `text` (true) or it ended (false).
asio::awaitable<bool> read_until(terminal_handle& t, std::string const& text, std::string& seen,
                                 std::optional<process_exit>* ended = nullptr)
{
    for (;;) {
        if (seen.find(text) != std::string::npos) co_return true;
        auto r = co_await t.async_read();
        if (!r) co_return false;
        seen += r->data;
        if (r->ended) {
            if (ended) *ended = r->ended;
            co_return seen.find(text) != std::string::npos;
        }
    }
}

/// Reads a watch until it reported `what` on `name`.
asio::awaitable<bool> watch_until(file_watch& w, file_event::kind what, std::string const& name)
{
    for (;;) {
        auto ev = co_await w.async_next();
        if (!ev || !*ev) co_return false;
        if ((*ev)->what == what && (*ev)->name == name) co_return true;
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_adapter_files_pty)

BOOST_AUTO_TEST_CASE(write_read_stat_list_remove)
{
    local_server_fixture f;
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto sb = co_await new_sandbox(f, ex);
            auto* files = sb->files();
            BOOST_TEST_REQUIRE(files != nullptr);
            std::string const rel = "notes/a.txt", abs = "/workspace/notes/a.txt", body = "hello\nfiles\n";
            auto w = co_await files->async_write_file(rel, body);
            BOOST_TEST_REQUIRE(w.has_value(), (w ? "" : w.error().to_string()));
            BOOST_TEST(w->path == abs);
            // The shell sees the same tree (workspace coherent).
            BOOST_TEST(co_await sh_as(*sb, "cat /workspace/notes/a.txt | tr '\\n' ' '", std::nullopt) == "hello files");
            auto r = co_await files->async_read_file(abs);
            BOOST_TEST_REQUIRE(r.has_value());
            BOOST_TEST(*r == body);
            auto s = co_await files->async_stat(rel);
            BOOST_TEST_REQUIRE(s.has_value());
            BOOST_TEST((s->kind == file_kind::file));
            BOOST_TEST(s->size == static_cast<std::int64_t>(body.size()));
            BOOST_TEST(s->name == "a.txt");
            std::string const notes = "notes", here = "", tmp_file = "/tmp/b.txt", two = "2";
            auto l = co_await files->async_list_dir(here, 2);
            BOOST_TEST_REQUIRE(l.has_value());
            std::set<std::string> paths;
            for (auto const& e : *l) paths.insert(e.path);
            BOOST_TEST(paths.count("/workspace/notes") == 1u);
            BOOST_TEST(paths.count("/workspace/notes/a.txt") == 1u);
            // An allowed root.
            auto t = co_await files->async_write_file(tmp_file, two);
            BOOST_TEST_REQUIRE(t.has_value());
            auto tr = co_await files->async_read_file(tmp_file);
            BOOST_TEST_REQUIRE(tr.has_value());
            BOOST_TEST(*tr == "2");
            auto d = co_await files->async_remove(notes);
            BOOST_TEST_REQUIRE(d.has_value());
            auto gone = co_await files->async_stat(rel);
            BOOST_TEST_REQUIRE(!gone);
            BOOST_TEST((gone.error() == errc::not_found));
            // Refused locally, and the file outside stays unread.
            std::string const passwd = "../../etc/passwd";
            auto esc = co_await files->async_read_file(passwd);
            BOOST_TEST_REQUIRE(!esc);
            BOOST_TEST((esc.error() == errc::permission_denied));
            (void)co_await sb->async_kill();
        },
        long_test);
}

BOOST_AUTO_TEST_CASE(watch_reports_changes_and_cancellation_closes_it)
{
    local_server_fixture f;
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto sb = co_await new_sandbox(f, ex);
            auto* files = sb->files();
            std::string const here = "", sub = "sub/x.txt", top = "top.txt", data = "x";
            auto mk = co_await files->async_write_file(sub, data);  // sub/ exists before the watch
            BOOST_TEST_REQUIRE(mk.has_value());
            auto w = co_await files->async_watch(here, true);
            BOOST_TEST_REQUIRE(w.has_value(), (w ? "" : w.error().to_string()));
            // The watch is in place once it completed: these changes are reported.
            (void)co_await files->async_write_file(top, data);
            BOOST_TEST(co_await watch_until(**w, file_event::kind::create, "top.txt"));
            BOOST_TEST(co_await sh_as(*sb, "echo y > /workspace/sub/y.txt && rm /workspace/top.txt && echo ok",
                                      std::nullopt) == "ok");
            BOOST_TEST(co_await watch_until(**w, file_event::kind::create, "sub/y.txt"));
            BOOST_TEST(co_await watch_until(**w, file_event::kind::remove, "top.txt"));

            // Per-operation cancellation of a read closes the watch: emitted once the read was initiated.
            asio::cancellation_signal sig;
            asio::post(ex, [&] { sig.emit(asio::cancellation_type::terminal); });
            auto r = co_await (*w)->async_next(asio::bind_cancellation_slot(sig.slot(), asio::use_awaitable));
            BOOST_TEST_REQUIRE(!r);
            BOOST_TEST((r.error() == errc::cancelled));
            auto after = co_await (*w)->async_next();
            BOOST_TEST((!after && after.error() == errc::cancelled));
            (void)co_await sb->async_kill();
        },
        long_test);
}

BOOST_AUTO_TEST_CASE(client_watch_dir_errors_and_deadline)
{
    local_server_fixture f;
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            e2b::client_options o;
            o.api_key = f.api_key();
            o.api_url = f.api_url();
            o.sandbox_url = f.sandbox_url();
            o.max_retries = 0;
            auto c = e2b::make_client(ex, o);
            BOOST_TEST_REQUIRE(c.has_value());
            e2b::create_sandbox_params cp;
            auto h = co_await (*c)->async_create_sandbox(cp);
            BOOST_TEST_REQUIRE(h.has_value());
            auto const target = e2b::envd_target::from(*h);

            e2b::watch_dir_params missing;
            missing.path = "/workspace/missing";
            auto m = co_await (*c)->async_watch_dir(target, missing);
            BOOST_TEST_REQUIRE(!m);
            BOOST_TEST((m.error() == errc::not_found), m.error().to_string());

            // envd ends the stream at Connect-Timeout-Ms: an error (timed_out), never a clean end.
            e2b::watch_dir_params bounded;
            bounded.path = "/workspace";
            bounded.timeout = std::chrono::milliseconds(500);
            auto w = co_await (*c)->async_watch_dir(target, bounded);
            BOOST_TEST_REQUIRE(w.has_value(), (w ? "" : w.error().to_string()));
            for (;;) {
                auto ev = co_await (*w)->async_next();
                if (ev && *ev) continue;  // an event of the workspace: read on
                BOOST_TEST_REQUIRE(!ev);
                BOOST_TEST((ev.error() == errc::timed_out), ev.error().to_string());
                break;
            }
            auto again = co_await (*w)->async_next();
            BOOST_TEST((!again && again.error() == errc::timed_out));  // sticky

            // A sandbox killed under a watch ends it with an error, not a clean end.
            e2b::watch_dir_params open;
            open.path = "/workspace";
            auto w2 = co_await (*c)->async_watch_dir(target, open);
            BOOST_TEST_REQUIRE(w2.has_value());
            auto k = co_await (*c)->async_kill_sandbox(h->sandbox_id);
            BOOST_TEST_REQUIRE(k.has_value());
            for (;;) {
                auto ev = co_await (*w2)->async_next();
                if (ev && *ev) continue;
                BOOST_TEST_REQUIRE(!ev);  // never a clean end: cut (unknown_outcome) or the directory's removal
                BOOST_TEST((ev.error() == errc::unknown_outcome || ev.error() == errc::not_found),
                           ev.error().to_string());
                break;
            }
        },
        long_test);
}

BOOST_AUTO_TEST_CASE(terminal_start_input_resize_attach_kill)
{
    local_server_fixture f;
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto sb = co_await new_sandbox(f, ex);
            auto* pty = sb->pty();
            BOOST_TEST_REQUIRE(pty != nullptr);
            auto req = sh_terminal("stty size; pwd; read line; echo got-$line; stty size; read x; echo never", 50, 20);
            auto t = co_await pty->async_start_terminal(req);
            BOOST_TEST_REQUIRE(t.has_value(), (t ? "" : t.error().to_string()));
            BOOST_TEST((*t)->pid() > 0u);
            std::string seen;
            BOOST_TEST(co_await read_until(**t, "20 50", seen));
            BOOST_TEST(co_await read_until(**t, "/workspace", seen));  // the default cwd is the workdir
            terminal_size const bigger{120, 40};
            auto rs = co_await (*t)->async_resize(bigger);
            BOOST_TEST_REQUIRE(rs.has_value(), (rs ? "" : rs.error().to_string()));
            std::string const line = "hi\n";
            auto wr = co_await (*t)->async_write(line);
            BOOST_TEST_REQUIRE(wr.has_value());
            BOOST_TEST(co_await read_until(**t, "got-hi", seen));
            BOOST_TEST(co_await read_until(**t, "40 120", seen));

            // Re-attach by pid: a second handle follows the same terminal.
            auto again = co_await pty->async_attach_terminal((*t)->pid());
            BOOST_TEST_REQUIRE(again.has_value(), (again ? "" : again.error().to_string()));
            auto k = co_await (*again)->async_kill();
            BOOST_TEST_REQUIRE(k.has_value());
            std::optional<process_exit> ended;
            std::string rest;
            BOOST_TEST(!co_await read_until(**again, "never", rest, &ended));
            BOOST_TEST_REQUIRE(ended.has_value());
            BOOST_TEST((ended->outcome == exit_outcome::killed));
            BOOST_TEST(!ended->exit_code.has_value());
            // Reading after the end repeats it.
            auto after = co_await (*again)->async_read();
            BOOST_TEST_REQUIRE(after.has_value());
            BOOST_TEST(after->ended.has_value());

            auto missing = co_await pty->async_attach_terminal(999999u);
            BOOST_TEST_REQUIRE(!missing);
            BOOST_TEST((missing.error() == errc::not_found), missing.error().to_string());
            (void)co_await sb->async_kill();
        },
        long_test);
}

BOOST_AUTO_TEST_CASE(terminal_exit_code_and_user)
{
    local_server_fixture f;
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto sb = co_await new_sandbox(f, ex);
            auto req = sh_terminal("id -un; exit 3", 80, 24);
            req.user = "root";
            auto t = co_await sb->pty()->async_start_terminal(req);
            BOOST_TEST_REQUIRE(t.has_value(), (t ? "" : t.error().to_string()));
            std::string seen;
            std::optional<process_exit> ended;
            BOOST_TEST(!co_await read_until(**t, "never-printed", seen, &ended));
            BOOST_TEST(seen.find("root") != std::string::npos, seen);
            BOOST_TEST_REQUIRE(ended.has_value());
            BOOST_TEST(ended->exit_code.value_or(-1) == 3);
            (void)co_await sb->async_kill();
        },
        long_test);
}

BOOST_AUTO_TEST_CASE(user_reaches_envd)
{
    local_server_fixture f;
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto sb = co_await new_sandbox(f, ex);
            BOOST_TEST(co_await sh_as(*sb, "id -un", std::nullopt) == "user");  // the default is unchanged
            BOOST_TEST(co_await sh_as(*sb, "id -un", std::string("root")) == "root");
            BOOST_TEST(co_await sh_as(*sb, "id -un", std::string("user")) == "user");
            // An unknown user is envd's refusal, not a silent default.
            auto const unknown = co_await sh_as(*sb, "id -un", std::string("nobody-here"));
            BOOST_TEST(unknown.find("<error") == 0u, unknown);

            exec_file_request whoami = exec_file_request::argv("/usr/bin/id", "-un");
            whoami.user = "root";
            auto r = co_await sb->async_exec_file(whoami);
            BOOST_TEST_REQUIRE(r.has_value());
            BOOST_TEST(r->stdout_data == "root\n");

            process_request p = process_request::argv("/bin/sh", "-c", "id -un; read x");
            p.user = "root";
            std::string out;
            std::mutex mu;
            p.on_data = [&](output_stream, std::string_view d) {
                std::lock_guard lk(mu);
                out += d;
            };
            auto h = co_await sb->async_start_process(p);
            BOOST_TEST_REQUIRE(h.has_value());
            auto const printed = [&] {
                std::lock_guard lk(mu);
                return out.find("root") != std::string::npos;
            };
            BOOST_TEST(co_await async_eventually(printed, std::chrono::seconds(20)));
            (void)co_await (*h)->async_kill();
            (void)co_await sb->async_kill();
        },
        long_test);
}

BOOST_AUTO_TEST_SUITE_END()
