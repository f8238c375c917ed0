// create/connect/pause/resume/stop/kill/close/status: exactly which vendor calls each makes.
#include <prism_e2b/redactor.hpp>

#include "adapter_test_util.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::test;
using names = std::vector<std::string>;

namespace {
stop_options const default_stop{};
close_options const default_close{};
close_options const with_snapshot{.export_snapshot = true};
}  // namespace

BOOST_AUTO_TEST_SUITE(test_e2b_sandbox)

BOOST_AUTO_TEST_CASE(create_sends_defaults_and_makes_workdir)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        BOOST_TEST(sb->id() == "sbx-1");
        BOOST_TEST(sb->workdir() == "/workspace");
        BOOST_TEST(sb->template_name() == "base");
        BOOST_TEST((sb->capabilities() == e2b_default_capabilities()));
        BOOST_TEST(sb->capabilities().network_isolated == false);
        BOOST_TEST(sb->capabilities().workspace_coherent == true);
        BOOST_TEST(sb->processes() != nullptr);
        BOOST_TEST(sb->pause_control() != nullptr);
    });
    BOOST_TEST(fake->call_names() == N({"create_sandbox", "make_dir"}), boost::test_tools::per_element());
    BOOST_TEST(fake->calls_named("make_dir").at(0).detail == "/workspace");
    auto p = fake->create_params().at(0);
    BOOST_TEST(p.template_id == "base");
    BOOST_TEST(p.timeout.count() == 1200);  // limits.wall_time 20 min
    BOOST_REQUIRE(p.auto_resume.has_value());
    BOOST_TEST(*p.auto_resume == false);
    BOOST_TEST(p.auto_pause.value_or(true) == false);
}

BOOST_AUTO_TEST_CASE(timeout_is_ceil_seconds_and_on_timeout_pause_sends_auto_pause)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_sandbox_options o;
        o.timeout = std::chrono::milliseconds(1500);
        o.on_timeout = e2b_on_timeout::pause;
        o.template_name = "my-template";
        o.labels = L({{"app.owner", "alice"}});
        co_await make_sandbox(ex, fake, o);
    });
    auto p = fake->create_params().at(0);
    BOOST_TEST(p.timeout.count() == 2);
    BOOST_TEST(p.auto_pause.value_or(false) == true);
    BOOST_TEST(p.auto_resume.value_or(true) == false);  // always disabled
    BOOST_TEST(p.template_id == "my-template");
    BOOST_TEST(p.metadata.at("app.owner") == "alice");
}

BOOST_AUTO_TEST_CASE(wall_time_is_the_default_timeout)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_sandbox_options o;
        o.limits.wall_time = std::chrono::milliseconds(600001);
        co_await make_sandbox(ex, fake, o);
    });
    BOOST_TEST(fake->create_params().at(0).timeout.count() == 601);
}

BOOST_AUTO_TEST_CASE(neither_api_key_nor_client_is_invalid_argument)
{
    auto r = run_coro([&](auto ex) { return async_create_e2b_sandbox(ex, e2b_sandbox_options{}); });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::invalid_argument));
    BOOST_TEST(r.error().message().find("api_key") != std::string::npos);

    auto c =
        run_coro([&](auto ex) { return async_connect_e2b_sandbox(ex, e2b_connect_options{.sandbox_id = "sbx-1"}); });
    BOOST_REQUIRE(!c);
    BOOST_TEST((c.error() == errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(invalid_options_fail_before_any_vendor_call)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    auto attempt = [&](e2b_sandbox_options o) {
        o.client = fake;
        return run_coro(test_ioc, [&](auto ex) { return async_create_e2b_sandbox(ex, o); });
    };
    e2b_sandbox_options o;
    o.limits.max_concurrent_execs = 9;  // hard cap 8
    BOOST_TEST((attempt(o).error() == errc::invalid_argument));
    o = {};
    o.limits.max_commands = 0;
    BOOST_TEST((attempt(o).error() == errc::invalid_argument));
    o = {};
    o.timeout = std::chrono::milliseconds(31 * 60 * 1000);
    BOOST_TEST((attempt(o).error() == errc::invalid_argument));
    o = {};
    o.workdir = "relative/dir";
    BOOST_TEST((attempt(o).error() == errc::invalid_argument));
    o = {};
    o.template_name = "";
    BOOST_TEST((attempt(o).error() == errc::invalid_argument));
    o = {};
    o.labels = {{"owner", "ali\nce"}};
    BOOST_TEST((attempt(o).error() == errc::invalid_argument));
    o = {};
    o.labels = {{std::string(200, 'k'), "v"}};
    BOOST_TEST((attempt(o).error() == errc::invalid_argument));
    o = {};
    o.labels = {{"k", std::string(600, 'v')}};
    BOOST_TEST((attempt(o).error() == errc::invalid_argument));
    // Not UTF-8 (found by fuzz_labels): the create body would not be JSON.
    o = {};
    o.labels = {{"run", "mx4hvl4\xe2-38b7597f"}};
    BOOST_TEST((attempt(o).error() == errc::invalid_argument));
    o = {};
    o.labels = {{"\xc0\xaf", "v"}};
    BOOST_TEST((attempt(o).error() == errc::invalid_argument));
    BOOST_TEST(fake->calls().empty());
    label_map const utf8{{"caf\xc3\xa9", "\xe2\x82\xac \xf0\x9f\x99\x82"}};  // well-formed UTF-8 is fine
    BOOST_TEST(validate_labels(utf8).has_value());
}

BOOST_AUTO_TEST_CASE(label_equal_to_a_secret_is_rejected_before_any_call)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    std::string const key = "e2b_unit_canary_label_secret_77";
    e2b_sandbox_options o;
    o.client = fake;
    secret_redactor::global().add(key);
    o.labels = {{"leak", key}};
    auto r = run_coro(test_ioc, [&](auto ex) { return async_create_e2b_sandbox(ex, o); });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::invalid_argument));
    BOOST_TEST(r.error().to_string().find(key) == std::string::npos);
    o.labels = {{"leak", "prefix-" + key}};
    r = run_coro(test_ioc, [&](auto ex) { return async_create_e2b_sandbox(ex, o); });
    BOOST_TEST((r.error() == errc::invalid_argument));
    BOOST_TEST(fake->calls().empty());

    // The api_key given in the options counts as a secret even before any client sees it.
    e2b_sandbox_options k;
    k.api_key = "e2b_unit_canary_api_key_0042";
    k.labels = {{"leak", "e2b_unit_canary_api_key_0042"}};
    r = run_coro(test_ioc, [&](auto ex) { return async_create_e2b_sandbox(ex, k); });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::invalid_argument));
    BOOST_TEST(r.error().to_string().find("e2b_unit_canary_api_key_0042") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(setup_failure_after_create_kills_the_sandbox)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->fail_next("make_dir", error(errc::server_error, "envd failed", {"filesystem.MakeDir", 500}));
    auto r = run_coro(test_ioc, [&](auto ex) { return async_create_e2b_sandbox(ex, fake_options(fake)); });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::server_error));
    BOOST_TEST(fake->call_names() == N({"create_sandbox", "make_dir", "kill_sandbox"}),
               boost::test_tools::per_element());
    BOOST_TEST(fake->calls_named("kill_sandbox").at(0).sandbox_id == "sbx-1");
    BOOST_TEST(fake->sandbox("sbx-1")->killed);
}

BOOST_AUTO_TEST_CASE(a_refused_make_dir_falls_back_to_root_once)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->fail_next("make_dir", error(errc::permission_denied, "denied", {"filesystem.MakeDir", 403}));
    // The sandbox is dropped inside: it must not outlive its io_context.
    auto created = run_coro(test_ioc, [&](auto ex) -> asio::awaitable<bool> {
        auto o = fake_options(fake);
        auto r = co_await async_create_e2b_sandbox(ex, std::move(o));
        co_return r.has_value();
    });
    BOOST_REQUIRE(created);
    BOOST_TEST(fake->call_names() == N({"create_sandbox", "make_dir", "start_process"}),
               boost::test_tools::per_element());
    auto p = fake->start_params().at(0);
    BOOST_TEST(p.user.value_or("") == "root");
    BOOST_TEST(p.process.args.back() == "/workspace");  // passed as an argument, never spliced into the script

    // When that fails too, the sandbox is killed.
    fake->fail_next("make_dir", error(errc::permission_denied, "denied", {"filesystem.MakeDir", 403}));
    fake->script_next_process(process_script{{}, process_script::then::exit, 1});
    auto f = run_coro(test_ioc, [&](auto ex) { return async_create_e2b_sandbox(ex, fake_options(fake)); });
    BOOST_REQUIRE(!f);
    BOOST_TEST(fake->count("kill_sandbox") == 1u);
    BOOST_TEST(fake->calls_named("kill_sandbox").at(0).sandbox_id == "sbx-2");
}

BOOST_AUTO_TEST_CASE(create_failure_makes_no_kill)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->fail_next("create_sandbox", error(errc::unauthenticated, "bad key", {"create", 401}));
    auto r = run_coro(test_ioc, [&](auto ex) { return async_create_e2b_sandbox(ex, fake_options(fake)); });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::unauthenticated));
    BOOST_TEST(fake->call_names() == N({"create_sandbox"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(host_capabilities_override_and_never_claim_more)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_sandbox_options o;
        sandbox_capabilities c;
        c.network_isolated = true;
        o.capabilities = c;
        auto sb = co_await make_sandbox(ex, fake, o);
        BOOST_TEST(sb->capabilities().network_isolated);
        BOOST_TEST(!sb->capabilities().workspace_coherent);  // omitted fields resolve false
        BOOST_TEST(!sb->capabilities().process_isolated);
    });
}

BOOST_AUTO_TEST_CASE(connect_without_resume_makes_only_the_info_call)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->add_sandbox({.id = "sbx-p", .state = e2b::sandbox_state::paused, .metadata = {{"app.owner", "alice"}}});
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_connect_options o;
        o.client = fake;
        o.sandbox_id = "sbx-p";
        o.expected_labels = L({{"app.owner", "alice"}});
        auto sb = co_await async_connect_e2b_sandbox(ex, o);
        BOOST_TEST_REQUIRE(sb.has_value());
        BOOST_TEST((*sb)->id() == "sbx-p");
        BOOST_TEST(fake->call_names() == N({"get_sandbox_info"}), boost::test_tools::per_element());

        // Activity never resumes: a typed paused error and no vendor call.
        auto r = co_await (*sb)->async_exec(shell("echo hi"));
        BOOST_TEST_REQUIRE(!r);
        BOOST_TEST((r.error() == errc::paused));
        auto p = co_await (*sb)->async_start_process(proc("/bin/sleep", "60"));
        BOOST_TEST_REQUIRE(!p);
        BOOST_TEST((p.error() == errc::paused));
        BOOST_TEST(fake->call_names() == N({"get_sandbox_info"}), boost::test_tools::per_element());
        BOOST_TEST((fake->sandbox("sbx-p")->state == e2b::sandbox_state::paused));
    });
}

BOOST_AUTO_TEST_CASE(connect_with_wrong_labels_is_wrong_owner_and_nothing_else)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->add_sandbox({.id = "sbx-p", .state = e2b::sandbox_state::paused, .metadata = {{"app.owner", "alice"}}});
    for (auto labels : std::vector<label_map>{{{"app.owner", "mallory"}}, {{"app.owner", "alice"}, {"team", "x"}}}) {
        fake->clear_calls();
        auto r = run_coro(test_ioc, [&](auto ex) {
            e2b_connect_options o;
            o.client = fake;
            o.sandbox_id = "sbx-p";
            o.expected_labels = labels;
            o.resume = true;  // even with resume requested, nothing happens
            return async_connect_e2b_sandbox(ex, o);
        });
        BOOST_REQUIRE(!r);
        BOOST_TEST((r.error() == errc::wrong_owner));
        BOOST_TEST(fake->call_names() == N({"get_sandbox_info"}), boost::test_tools::per_element());
    }
    BOOST_TEST((fake->sandbox("sbx-p")->state == e2b::sandbox_state::paused));
}

BOOST_AUTO_TEST_CASE(connect_with_resume_resumes_with_the_configured_timeout)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->add_sandbox({.id = "sbx-p", .state = e2b::sandbox_state::paused});
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_connect_options o;
        o.client = fake;
        o.sandbox_id = "sbx-p";
        o.resume = true;
        o.timeout = std::chrono::milliseconds(600000);
        auto sb = co_await async_connect_e2b_sandbox(ex, o);
        BOOST_TEST_REQUIRE(sb.has_value());
        BOOST_TEST(fake->call_names() == N({"get_sandbox_info", "connect_sandbox"}), boost::test_tools::per_element());
        BOOST_TEST(fake->calls_named("connect_sandbox").at(0).detail == "timeout=600");
        auto r = co_await (*sb)->async_exec(shell("true"));
        BOOST_TEST(r.has_value());
    });
}

BOOST_AUTO_TEST_CASE(connect_to_a_running_sandbox_makes_no_connect_call)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->add_sandbox({.id = "sbx-r"});
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_connect_options o;
        o.client = fake;
        o.sandbox_id = "sbx-r";
        o.resume = true;
        auto sb = co_await async_connect_e2b_sandbox(ex, o);
        BOOST_TEST_REQUIRE(sb.has_value());
        BOOST_TEST(fake->call_names() == N({"get_sandbox_info"}), boost::test_tools::per_element());
        auto r = co_await (*sb)->async_exec(shell("true"));
        BOOST_TEST(r.has_value());  // uses the access token from the info
    });
}

BOOST_AUTO_TEST_CASE(connect_to_a_missing_sandbox_is_not_found)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    auto r = run_coro(test_ioc, [&](auto ex) {
        e2b_connect_options o;
        o.client = fake;
        o.sandbox_id = "sbx-none";
        return async_connect_e2b_sandbox(ex, o);
    });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::not_found));
}

BOOST_AUTO_TEST_CASE(resume_sends_the_configured_timeout)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_sandbox_options o;
        o.timeout = std::chrono::milliseconds(600000);
        auto sb = co_await make_sandbox(ex, fake, o);
        auto p = co_await sb->async_pause(keep_memory);
        BOOST_TEST_REQUIRE(p.has_value());
        BOOST_TEST((p->what == pause_outcome::kind::paused));
        BOOST_TEST((p->snapshot == snapshot_kind::memory));
        BOOST_TEST(p->http_status == 204);
        fake->clear_calls();
        auto r = co_await sb->async_resume();
        BOOST_TEST(r.has_value());
        BOOST_TEST(fake->call_names() == N({"connect_sandbox"}), boost::test_tools::per_element());
        BOOST_TEST(fake->calls_named("connect_sandbox").at(0).detail == "timeout=600");
        auto e = co_await sb->async_exec(shell("true"));
        BOOST_TEST(e.has_value());
    });
}

BOOST_AUTO_TEST_CASE(pause_503_is_refused_and_leaves_running)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        fake->pause_reply_next({e2b::pause_reply::kind::busy, 503, "sandbox is busy"});
        auto p = co_await sb->async_pause(filesystem_only);
        BOOST_TEST_REQUIRE(p.has_value());
        BOOST_TEST((p->what == pause_outcome::kind::refused_busy));
        BOOST_TEST(!p->is_paused());
        BOOST_TEST(p->http_status == 503);
        BOOST_TEST(fake->calls_named("pause_sandbox").at(0).detail == "memory=false");
        auto s = co_await sb->async_status();
        BOOST_TEST_REQUIRE(s.has_value());
        BOOST_TEST((s->state == sandbox_state::running));
        auto e = co_await sb->async_exec(shell("true"));
        BOOST_TEST(e.has_value());  // still running: activity works

        fake->pause_reply_next({e2b::pause_reply::kind::busy, 503, "busy"});
        auto st = co_await sb->async_stop(default_stop);
        BOOST_TEST_REQUIRE(!st);
        BOOST_TEST((st.error() == errc::service_busy));
        BOOST_TEST(fake->calls_named("pause_sandbox").at(1).detail == "memory=true");
    });
}

BOOST_AUTO_TEST_CASE(pause_twice_is_already_paused_and_stop_pauses_with_memory)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto st = co_await sb->async_stop(default_stop);
        BOOST_TEST(st.has_value());
        BOOST_TEST(fake->calls_named("pause_sandbox").at(0).detail == "memory=true");
        auto p = co_await sb->async_pause(keep_memory);
        BOOST_TEST_REQUIRE(p.has_value());
        BOOST_TEST((p->what == pause_outcome::kind::already_paused));
        BOOST_TEST(p->is_paused());
        auto s = co_await sb->async_status();
        BOOST_TEST((s->state == sandbox_state::paused));
    });
}

BOOST_AUTO_TEST_CASE(kill_twice_is_one_vendor_kill_and_close_is_idempotent)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        {
            auto r_ = co_await sb->async_kill();
            BOOST_TEST(r_.has_value());
        }
        {
            auto r_ = co_await sb->async_kill();
            BOOST_TEST(r_.has_value());
        }
        {
            auto r_ = co_await sb->async_close(default_close);
            BOOST_TEST(r_.has_value());
        }
        BOOST_TEST(fake->count("kill_sandbox") == 1u);
        auto s = co_await sb->async_status();
        BOOST_TEST((s->state == sandbox_state::killed));
        BOOST_TEST(fake->count("get_sandbox_info") == 0u);  // known killed: no call
        auto e = co_await sb->async_exec(shell("true"));
        BOOST_TEST_REQUIRE(!e);
        BOOST_TEST((e.error() == errc::not_found));
        BOOST_TEST(fake->count("start_process") == 0u);
    });
}

BOOST_AUTO_TEST_CASE(kill_of_a_gone_sandbox_is_success_and_failed_kill_can_be_retried)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        fake->fail_next("kill_sandbox", error(errc::server_error, "boom", {"kill", 500}));
        auto k = co_await sb->async_kill();
        BOOST_TEST((!k && k.error() == errc::server_error));
        {
            auto r_ = co_await sb->async_kill();
            BOOST_TEST(r_.has_value());
        }
        BOOST_TEST(fake->count("kill_sandbox") == 2u);

        auto other = co_await make_sandbox(ex, fake);
        auto gone = fake->sandbox(other->id());
        co_await fake->async_kill_sandbox(other->id());  // destroyed behind our back
        {
            auto r_ = co_await other->async_kill();
            BOOST_TEST(r_.has_value());
        }
    });
}

BOOST_AUTO_TEST_CASE(a_concurrent_kill_waits_for_the_one_in_flight)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        fake->fail_next("kill_sandbox", error(errc::server_error, "boom", {"kill", 500}));
        std::optional<result<void>> first;
        asio::co_spawn(ex, sb->async_kill(), [&](std::exception_ptr, result<void> r) { first = r; });
        auto second = co_await sb->async_kill();
        auto const first_done = [&] { return first.has_value(); };
        BOOST_TEST_REQUIRE(co_await async_eventually(first_done));
        // Whichever ran first got the failure; the waiting one retried and succeeded.
        BOOST_TEST((first->has_value() != second.has_value()));
        auto const& failed = first->has_value() ? second : *first;
        BOOST_TEST((failed.error() == errc::server_error));
        BOOST_TEST(fake->count("kill_sandbox") == 2u);

        auto other = co_await make_sandbox(ex, fake);
        std::optional<result<void>> a;
        asio::co_spawn(ex, other->async_kill(), [&](std::exception_ptr, result<void> r) { a = r; });
        auto b = co_await other->async_kill();
        auto const a_done = [&] { return a.has_value(); };
        BOOST_TEST_REQUIRE(co_await async_eventually(a_done));
        BOOST_TEST((a->has_value() && b.has_value()));
        BOOST_TEST(fake->count("kill_sandbox") == 3u);  // one more, not two
    });
}

BOOST_AUTO_TEST_CASE(close_with_export_is_unsupported_and_makes_no_call)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        fake->clear_calls();
        auto r = co_await sb->async_close(with_snapshot);
        BOOST_TEST_REQUIRE(!r);
        BOOST_TEST((r.error() == errc::unsupported));
        BOOST_TEST(fake->calls().empty());
        BOOST_TEST(!fake->sandbox(sb->id())->killed);
    });
}

BOOST_AUTO_TEST_CASE(status_reports_template_times_and_command_count)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto const before = std::chrono::system_clock::now();
        e2b_sandbox_options o;
        o.template_name = "tmpl";
        auto sb = co_await make_sandbox(ex, fake, o);
        auto s0 = co_await sb->async_status();
        BOOST_TEST_REQUIRE(s0.has_value());
        BOOST_TEST(s0->id == sb->id());
        BOOST_TEST(s0->template_name == "tmpl");
        BOOST_TEST(s0->command_count == 0u);
        BOOST_TEST((s0->started_at >= before));
        // The clock must move past the first activity (its resolution is finite).
        auto const later = [&] { return std::chrono::system_clock::now() > s0->last_activity_at; };
        BOOST_TEST_REQUIRE(co_await async_eventually(later));
        co_await sb->async_exec(shell("true"));
        co_await sb->async_exec_file(argv("/bin/true"));
        auto s1 = co_await sb->async_status();
        BOOST_TEST(s1->command_count == 2u);
        BOOST_TEST((s1->last_activity_at > s0->last_activity_at));
        BOOST_TEST((s1->state == sandbox_state::running));
    });
}

BOOST_AUTO_TEST_CASE(a_sandbox_gone_at_the_vendor_is_reported_killed)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        co_await fake->async_kill_sandbox(sb->id());  // on_timeout kill at the vendor
        auto s = co_await sb->async_status();
        BOOST_TEST_REQUIRE(s.has_value());
        BOOST_TEST((s->state == sandbox_state::killed));
        fake->clear_calls();
        auto e = co_await sb->async_exec(shell("true"));
        BOOST_TEST((!e && e.error() == errc::not_found));
        auto k = co_await sb->async_kill();  // already gone: success, no call
        BOOST_TEST(k.has_value());
        BOOST_TEST(fake->calls().empty());
    });
}

BOOST_AUTO_TEST_CASE(paused_by_the_vendor_is_seen_by_status)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        co_await fake->async_pause_sandbox(sb->id(), true);  // on_timeout pause
        auto s = co_await sb->async_status();
        BOOST_TEST((s->state == sandbox_state::paused));
        fake->clear_calls();
        auto e = co_await sb->async_exec(shell("true"));
        BOOST_TEST((!e && e.error() == errc::paused));
        BOOST_TEST(fake->calls().empty());
    });
}

BOOST_AUTO_TEST_SUITE_END()
