// The files() and pty() capabilities and `user` against the scripted fake:
// the workspace rules refuse before any vendor call, paused sandboxes make no
// call, errors carry no secret, and a backend without them says so.
#include <prism_e2b/redactor.hpp>

#include "adapter_test_util.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::test;

namespace {

/// Every envd file call the fake records.
std::size_t file_calls(fake_e2b_client const& f)
{
    return f.count("read_file") + f.count("write_file") + f.count("stat") + f.count("list_dir") + f.count("remove") +
           f.count("move");
}

e2b_sandbox_options with_roots(std::vector<std::string> roots)
{
    e2b_sandbox_options o;
    o.file_roots = std::move(roots);
    return o;
}

/// A backend with neither files nor terminals: the queries' defaults.
class bare_sandbox final : public disposable_sandbox {
public:
    std::string const& id() const noexcept override { return id_; }
    sandbox_capabilities capabilities() const noexcept override { return {}; }

protected:
    void do_exec(exec_request, completion_handler<exec_result>) override {}
    void do_exec_file(exec_file_request, completion_handler<exec_result>) override {}
    void do_status(completion_handler<sandbox_status>) override {}
    void do_stop(stop_options, completion_handler<void>) override {}
    void do_kill(completion_handler<void>) override {}
    void do_close(close_options, completion_handler<void>) override {}

private:
    std::string id_ = "bare";
};

}  // namespace

BOOST_AUTO_TEST_SUITE(test_files_and_pty)

BOOST_AUTO_TEST_CASE(escapes_are_refused_before_any_vendor_call)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    // Built outside the coroutine: g++ 12 and braced or converted temporaries inside co_await.
    auto const opts = with_roots(N({"/tmp/"}));
    auto const escapes = N({"..", "../etc/passwd", "a/../../x", "./../workspace2", "/etc/passwd",
                            "/workspace/../etc/shadow", "/workspacefoo/x", "/", "/tmpx/y"});
    auto const controls = N({"a\nb", "tab\there", "del\x7f"});
    auto const not_removable = N({"", ".", "/workspace", "/workspace/", "/tmp", "sub/.."});
    std::string const nul("a\0b", 3);
    std::string const huge_path(5000, 'a');
    std::string const one_byte = "x";
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake, opts);
        auto* files = sb->files();
        BOOST_TEST_REQUIRE(files != nullptr);
        fake->clear_calls();
        for (auto const& p : escapes) {
            auto r = co_await files->async_read_file(p);
            BOOST_TEST_REQUIRE(!r, p);
            BOOST_TEST((r.error() == errc::permission_denied), p << ": " << r.error().to_string());
            auto w = co_await files->async_write_file(p, one_byte);
            BOOST_TEST((!w && w.error() == errc::permission_denied), p);
            auto s = co_await files->async_stat(p);
            BOOST_TEST((!s && s.error() == errc::permission_denied), p);
            auto l = co_await files->async_list_dir(p, 1);
            BOOST_TEST((!l && l.error() == errc::permission_denied), p);
            auto d = co_await files->async_remove(p);
            BOOST_TEST((!d && d.error() == errc::permission_denied), p);
            auto wt = co_await files->async_watch(p, true);
            BOOST_TEST((!wt && wt.error() == errc::permission_denied), p);
        }
        for (auto const& p : controls) {
            auto r = co_await files->async_read_file(p);
            BOOST_TEST((!r && r.error() == errc::invalid_argument), p);
        }
        auto r = co_await files->async_stat(nul);
        BOOST_TEST((!r && r.error() == errc::invalid_argument));
        auto huge = co_await files->async_stat(huge_path);
        BOOST_TEST((!huge && huge.error() == errc::invalid_argument));
        // The workspace and the roots are where the rules start, never something to remove.
        for (auto const& p : not_removable) {
            auto d = co_await files->async_remove(p);
            BOOST_TEST((!d && d.error() == errc::permission_denied), p);
        }
    });
    BOOST_TEST(file_calls(*fake) == 0u);
    BOOST_TEST(fake->count("start_process") == 0u);
}

BOOST_AUTO_TEST_CASE(paths_resolve_under_the_workspace_and_the_roots)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    auto const opts = with_roots(N({"/tmp"}));
    auto const reads_of = N({"a.txt", "src/./lib//x.cpp", "src/../b.txt", "/workspace/c.txt", "/tmp/d.txt"});
    std::string const write_to = "out/e.txt", data = "data", here = "", dot = ".", stat_of = "/tmp/../tmp/f",
                      remove_of = "g";
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake, opts);
        auto* files = sb->files();
        fake->clear_calls();
        for (auto const& p : reads_of) (void)co_await files->async_read_file(p);
        (void)co_await files->async_write_file(write_to, data);
        (void)co_await files->async_list_dir(here, 2);
        (void)co_await files->async_list_dir(dot, 1);
        (void)co_await files->async_stat(stat_of);
        (void)co_await files->async_remove(remove_of);
    });
    auto const reads = fake->calls_named("read_file");
    BOOST_REQUIRE(reads.size() == 5u);
    BOOST_TEST(reads[0].detail == "/workspace/a.txt");
    BOOST_TEST(reads[1].detail == "/workspace/src/lib/x.cpp");
    BOOST_TEST(reads[2].detail == "/workspace/b.txt");
    BOOST_TEST(reads[3].detail == "/workspace/c.txt");
    BOOST_TEST(reads[4].detail == "/tmp/d.txt");
    BOOST_TEST(fake->calls_named("write_file").at(0).detail == "/workspace/out/e.txt");
    BOOST_TEST(fake->calls_named("list_dir").at(0).detail == "/workspace");
    BOOST_TEST(fake->calls_named("list_dir").at(1).detail == "/workspace");
    BOOST_TEST(fake->calls_named("stat").at(0).detail == "/tmp/f");
    BOOST_TEST(fake->calls_named("remove").at(0).detail == "/workspace/g");
    // The sandbox's own envd target: every call went to its id, with no extra info call.
    for (auto const& c : fake->calls()) BOOST_TEST(c.sandbox_id == "sbx-1");
    BOOST_TEST(fake->count("get_sandbox_info") == 0u);
}

BOOST_AUTO_TEST_CASE(bad_file_roots_are_refused_at_create)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    auto r = run_coro(test_ioc, [&](auto ex) {
        auto o = with_roots(N({"tmp"}));
        o.client = fake;
        return async_create_e2b_sandbox(ex, std::move(o));
    });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::invalid_argument));
    BOOST_TEST(fake->count("create_sandbox") == 0u);
}

BOOST_AUTO_TEST_CASE(errors_carry_no_secret)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto const token = fake->sandbox(sb->id())->token;
        // A refused path and a vendor error, both naming a path that holds the token.
        auto const outside = "/etc/" + token;
        auto refused = co_await sb->files()->async_read_file(outside);
        BOOST_TEST_REQUIRE(!refused);
        BOOST_TEST(refused.error().to_string().find(token) == std::string::npos);
        BOOST_TEST(refused.error().to_string().find("[REDACTED]") != std::string::npos);
        auto vendor = co_await sb->files()->async_read_file(token);
        BOOST_TEST_REQUIRE(!vendor);
        BOOST_TEST((vendor.error() == errc::not_found));
        BOOST_TEST(vendor.error().to_string().find(token) == std::string::npos);
    });
}

BOOST_AUTO_TEST_CASE(a_paused_sandbox_makes_no_file_or_terminal_call)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    std::string const a = "a", here = "";
    terminal_request const shell_on_pty;
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto p = co_await sb->async_pause(keep_memory);
        BOOST_TEST_REQUIRE(p.has_value());
        fake->clear_calls();
        auto r = co_await sb->files()->async_read_file(a);
        BOOST_TEST((!r && r.error() == errc::paused));
        auto w = co_await sb->files()->async_watch(here, false);
        BOOST_TEST((!w && w.error() == errc::paused));
        auto t = co_await sb->pty()->async_start_terminal(shell_on_pty);
        BOOST_TEST((!t && t.error() == errc::paused));
    });
    BOOST_TEST(fake->calls().empty());
}

BOOST_AUTO_TEST_CASE(clients_without_watch_or_pty_answer_unsupported)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    std::string const here = "";
    terminal_request const shell_on_pty;
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto w = co_await sb->files()->async_watch(here, true);
        BOOST_TEST_REQUIRE(!w);
        BOOST_TEST((w.error() == errc::unsupported));
        auto t = co_await sb->pty()->async_start_terminal(shell_on_pty);
        BOOST_TEST_REQUIRE(!t);
        BOOST_TEST((t.error() == errc::unsupported));
    });
}

BOOST_AUTO_TEST_CASE(backends_without_the_capabilities_say_not_supported)
{
    bare_sandbox bare;
    BOOST_TEST(bare.files() == nullptr);
    BOOST_TEST(bare.pty() == nullptr);
    BOOST_TEST(!bare.supports(sandbox_feature::files));
    BOOST_TEST(!bare.supports(sandbox_feature::pty));
    BOOST_TEST(!bare.supports(sandbox_feature::processes));
    BOOST_TEST(!bare.supports(sandbox_feature::pause));

    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        disposable_sandbox& as_contract = *sb;
        BOOST_TEST(as_contract.files() != nullptr);
        BOOST_TEST(as_contract.pty() != nullptr);
        BOOST_TEST(as_contract.supports(sandbox_feature::processes));
        BOOST_TEST(as_contract.supports(sandbox_feature::pause));
        BOOST_TEST(as_contract.supports(sandbox_feature::files));
        BOOST_TEST(as_contract.supports(sandbox_feature::pty));
    });
}

BOOST_AUTO_TEST_CASE(user_reaches_the_vendor_and_is_validated)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    std::vector<std::string> const bad_users{std::string(), "a:b", "ro\not", std::string(65, 'u'), "x\x7f", "tab\tx"};
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto req = shell("id -un");
        auto r = co_await sb->async_exec(req);  // default: no user sent
        BOOST_TEST_REQUIRE(r.has_value());
        req.user = "root";
        r = co_await sb->async_exec(req);
        BOOST_TEST_REQUIRE(r.has_value());
        auto f = argv("/usr/bin/id", "-un");
        f.user = "user";
        r = co_await sb->async_exec_file(f);
        BOOST_TEST_REQUIRE(r.has_value());
        auto p = proc("/bin/sleep", "1");
        p.user = "root";
        auto h = co_await sb->async_start_process(p);
        BOOST_TEST_REQUIRE(h.has_value());
        (void)co_await (*h)->async_kill();

        auto const before = fake->count("start_process");
        for (auto const& bad : bad_users) {
            req.user = bad;
            auto e = co_await sb->async_exec(req);
            BOOST_TEST((!e && e.error() == errc::invalid_argument));
            p.user = bad;
            auto ep = co_await sb->async_start_process(p);
            BOOST_TEST((!ep && ep.error() == errc::invalid_argument));
            terminal_request t;
            t.user = bad;
            auto et = co_await sb->pty()->async_start_terminal(t);
            BOOST_TEST((!et && et.error() == errc::invalid_argument));
        }
        BOOST_TEST(fake->count("start_process") == before);
    });
    auto const starts = fake->start_params();
    BOOST_REQUIRE(starts.size() == 4u);  // the workdir is made by make_dir, not a process
    BOOST_TEST(!starts[0].user.has_value());
    BOOST_TEST(starts[1].user.value_or("") == "root");
    BOOST_TEST(starts[2].user.value_or("") == "user");
    BOOST_TEST(starts[3].user.value_or("") == "root");
}

BOOST_AUTO_TEST_SUITE_END()
