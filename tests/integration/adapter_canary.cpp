// Secret canary: a full adapter scenario with a canary API key. No log line,
// error text, what(), ref, label, status, process argv/env or session info may
// contain the key or the envd access token.
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/process_recovery.hpp>
#include <prism_e2b/process_ref.hpp>
#include <prism_e2b/process_sessions.hpp>
#include <prism_e2b/redactor.hpp>

#include "adapter_requests.hpp"
#include "local_server_fixture.hpp"
#include "run_coro.hpp"

#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <mutex>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

namespace {

struct evidence {
    std::mutex mu;
    std::vector<std::string> items;
    void add(std::string what, std::string s)
    {
        std::lock_guard lk(mu);
        items.push_back(std::move(what) + ": " + std::move(s));
    }
    log_sink sink(std::string origin)
    {
        return [this, origin](log_level, std::string_view line) { add(origin, std::string(line)); };
    }
};

std::string access_token_of(local_server_fixture& f, std::string const& id)
{
    raw_http c(f.port());
    auto r = c.request("GET", "/sandboxes/" + id, {}, api_headers(f));
    BOOST_REQUIRE(r.status == 200);
    auto o = r.json().as_object();
    return std::string(o["envdAccessToken"].as_string());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_adapter_canary)

BOOST_AUTO_TEST_CASE(no_secret_reaches_logs_errors_refs_labels_status_or_processes)
{
    // The fixture's key is fresh and random: it is the canary.
    local_server_fixture f;
    std::string const canary = f.api_key();
    BOOST_REQUIRE(canary.size() >= 16u);
    evidence ev;
    std::string token;

    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            e2b_sandbox_options o;
            o.api_key = canary;
            o.client_options.api_url = f.api_url();
            o.client_options.sandbox_url = f.sandbox_url();
            o.client_options.logger = ev.sink("client log");
            o.logger = ev.sink("adapter log");
            o.labels = {{"app.owner", "alice"}};

            // A label carrying the key is refused before any vendor call.
            auto leaky = o;
            leaky.labels = {{"token", canary}};
            auto refused = co_await async_create_e2b_sandbox(ex, leaky);
            BOOST_TEST_REQUIRE(!refused);
            ev.add("label error", refused.error().to_string());

            auto created = co_await async_create_e2b_sandbox(ex, o);
            BOOST_TEST_REQUIRE(created.has_value());
            auto sb = *created;
            token = access_token_of(f, sb->id());
            BOOST_TEST_REQUIRE(token.size() >= 8u);
            for (auto const& [k, v] : sb->labels()) ev.add("label", k + "=" + v);

            // What the process sees: argv, environment.
            auto env = co_await sb->async_exec(shell("env; cat /proc/self/cmdline | tr '\\0' ' '"));
            BOOST_TEST_REQUIRE(env.has_value());
            BOOST_TEST(env->stdout_data.find("PATH=") != std::string::npos);  // really captured
            ev.add("process env/argv", env->stdout_data + env->stderr_data);
            auto failing = co_await sb->async_exec(shell("echo oops >&2; exit 9"));
            ev.add("exec status", failing->status + failing->stderr_data);

            process_request empty;  // no file: invalid
            auto h = co_await sb->async_start_process(std::move(empty));
            if (!h) ev.add("start error", h.error().to_string());
            process_request pr;
            pr.file = "/bin/sleep";
            pr.args = {"600"};
            auto sleeper = co_await sb->async_start_process(std::move(pr));
            BOOST_TEST_REQUIRE(sleeper.has_value());
            ev.add("ref", (*sleeper)->ref());
            auto rec = decode_process_ref((*sleeper)->ref());
            BOOST_TEST_REQUIRE(rec.has_value());
            ev.add("ref record", rec->sandbox_id + " " + rec->command_fingerprint + " " + rec->workspace);

            process_sessions_options so;
            so.sandbox = sb;
            auto ps = *process_sessions::create(ex, so);
            auto sid = co_await ps->async_attach("alice", (*sleeper)->ref());
            BOOST_TEST_REQUIRE(sid.has_value());
            ev.add("session", ps->info("alice", *sid)->ref);
            auto wrong = co_await ps->async_kill("mallory", *sid);
            ev.add("session error", wrong.error().to_string());

            auto st = co_await sb->async_status();
            ev.add("status", st->id + " " + st->template_name);

            auto p = co_await sb->async_pause(keep_memory);
            BOOST_TEST_REQUIRE(p.has_value());
            ev.add("pause", p->message);
            auto paused = co_await sb->async_exec(shell("true"));
            ev.add("paused error", paused.error().to_string());
            try {
                paused.value();
            } catch (std::exception const& e) {
                ev.add("what", e.what());
            }

            e2b_connect_options co;
            co.api_key = canary;
            co.client_options.api_url = f.api_url();
            co.client_options.sandbox_url = f.sandbox_url();
            co.client_options.logger = ev.sink("client log");
            co.logger = ev.sink("adapter log");
            co.sandbox_id = sb->id();
            co.expected_labels = {{"app.owner", "mallory"}};
            auto wrong_owner = co_await async_connect_e2b_sandbox(ex, co);
            BOOST_TEST_REQUIRE(!wrong_owner);
            ev.add("connect error", wrong_owner.error().to_string());
            co.expected_labels = {{"app.owner", "alice"}};
            co.sandbox_id = "no-such-sandbox";
            auto missing = co_await async_connect_e2b_sandbox(ex, co);
            BOOST_TEST_REQUIRE(!missing);
            ev.add("missing error", missing.error().to_string());

            auto bad_key = co;
            bad_key.api_key = "e2b_wrong_" + random_token(8);
            bad_key.sandbox_id = sb->id();
            auto unauth = co_await async_connect_e2b_sandbox(ex, bad_key);
            BOOST_TEST_REQUIRE(!unauth);
            ev.add("unauthenticated error", unauth.error().to_string());

            auto r = co_await sb->async_resume();
            BOOST_TEST_REQUIRE(r.has_value());
            auto backend = create_e2b_process_recovery_backend(sb, {sb->id(), "/workspace", {{"app.owner", "alice"}}});
            auto attached = co_await backend->async_attach((*sleeper)->ref(), nullptr);
            BOOST_TEST_REQUIRE((attached.has_value() && *attached != nullptr));
            co_await (*attached)->async_kill();
            auto k = co_await sb->async_kill();
            BOOST_TEST(k.has_value());
        },
        std::chrono::seconds(120), 2);

    std::lock_guard lk(ev.mu);
    BOOST_TEST(ev.items.size() > 10u);
    bool saw_log = false;
    for (auto const& item : ev.items) {
        saw_log = saw_log || item.rfind("adapter log", 0) == 0;
        BOOST_TEST(item.find(canary) == std::string::npos, "the API key leaked into " << item.substr(0, 40));
        BOOST_TEST(item.find(token) == std::string::npos, "the access token leaked into " << item.substr(0, 40));
    }
    BOOST_TEST(saw_log);  // the scenario really was logged
}

// A long-lived host: every sandbox's token is a secret while the sandbox lives
// (client and server side) and is forgotten once it is killed, so the
// redactor holds what is live, not everything ever seen.
BOOST_AUTO_TEST_CASE(tokens_are_secrets_while_their_sandbox_lives)
{
    local_server_fixture f;
    auto const& redactor = secret_redactor::global();
    std::vector<std::string> tokens;
    std::size_t const before = redactor.size();
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            e2b_sandbox_options o;
            o.api_key = f.api_key();
            o.client_options.api_url = f.api_url();
            o.client_options.sandbox_url = f.sandbox_url();
            for (int i = 0; i < 12; ++i) {
                auto sb = co_await async_create_e2b_sandbox(ex, o);
                BOOST_TEST_REQUIRE(sb.has_value());
                tokens.push_back(access_token_of(f, (*sb)->id()));
                BOOST_TEST(redactor.is_secret(tokens.back()));
                auto ran = co_await (*sb)->async_exec(shell("true"));
                BOOST_TEST(ran.has_value());
                BOOST_TEST(redactor.is_secret(tokens.back()));
                auto k = co_await (*sb)->async_kill();
                BOOST_TEST(k.has_value());
            }
        },
        std::chrono::seconds(120), 2);
    for (auto const& t : tokens) BOOST_TEST(!redactor.is_secret(t), "a killed sandbox's token is still held");
    BOOST_TEST(redactor.size() == before);
}

BOOST_AUTO_TEST_SUITE_END()
