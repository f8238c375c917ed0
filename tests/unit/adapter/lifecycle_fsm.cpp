// sandbox_fsm and process_fsm driven step by step: pause, resume, reboot,
// kill and exec races as tables of events and expected states and actions.
// No I/O, no executor, no sleeps: every step is deterministic.
#include "adapter/sandbox_fsm.hpp"

#include <boost/test/unit_test.hpp>

#include <functional>
#include <string>
#include <vector>

using namespace prism_e2b;
using namespace prism_e2b::detail;

namespace {

e2b::envd_target target(char const* token, char const* domain, char const* version)
{
    e2b::envd_target t;
    t.sandbox_id = "sb-1";
    if (token) t.access_token = token;
    if (domain) t.domain = domain;
    if (version) t.envd_version = version;
    return t;
}

e2b::end_event ended(bool exited, int code, char const* status)
{
    e2b::end_event e;
    e.exited = exited;
    e.exit_code = code;
    e.status = status;
    return e;
}

// The actions expected for one process after a step.
struct want {
    bool stop_reader = false;
    bool reattach = false;
};

// One step: an event on the fsm, the phase it must leave, and the actions it
// must ask of process `key` (only checked when `actions` is set).
struct step {
    char const* what;
    std::function<process_effects(sandbox_fsm&)> event;
    sandbox_phase phase;
    std::optional<process_phase> process;  ///< the followed process's phase after the step
    std::optional<want> actions;           ///< what the step asks of it
};

// Followed process key 1 (pid 7) is added by make_fsm().
sandbox_fsm make_fsm()
{
    sandbox_fsm f(target("tok", "d.example", "0.5.7"), sandbox_state::running);
    BOOST_TEST_REQUIRE(f.process_added(7) == 1u);
    return f;
}

process_effects none(process_actions const& a) { return process_effects{{1, a}}; }

void run(sandbox_fsm& f, std::vector<step> const& steps)
{
    for (auto const& s : steps) {
        BOOST_TEST_CONTEXT(s.what)
        {
            auto effects = s.event(f);
            BOOST_TEST(static_cast<int>(f.phase()) == static_cast<int>(s.phase));
            if (s.process) BOOST_TEST(static_cast<int>(f.process(1).phase()) == static_cast<int>(*s.process));
            if (s.actions) {
                want got;
                for (auto const& [key, a] : effects)
                    if (key == 1) got = {a.stop_reader, a.reattach};
                BOOST_TEST(got.stop_reader == s.actions->stop_reader);
                BOOST_TEST(got.reattach == s.actions->reattach);
            }
        }
    }
}

auto pause_begin = [](sandbox_fsm& f) {
    BOOST_TEST_REQUIRE(f.pause_begin().has_value());
    return process_effects{};
};
auto resume_begin = [](sandbox_fsm& f) {
    BOOST_TEST_REQUIRE(f.resume_begin().has_value());
    return process_effects{};
};
auto resumed = [](sandbox_fsm& f) { return f.resume_succeeded(target(nullptr, nullptr, nullptr)); };
auto paused_memory = [](sandbox_fsm& f) { return f.pause_succeeded(snapshot_kind::memory, false); };
auto paused_filesystem = [](sandbox_fsm& f) { return f.pause_succeeded(snapshot_kind::filesystem, false); };
auto refused = [](sandbox_fsm& f) { return f.pause_refused(); };
auto stream_cut = [](sandbox_fsm& f) { return none(f.stream_broken(1, "connection reset")); };
auto reattached = [](sandbox_fsm& f) { return none(f.reattached(1)); };

using sp = sandbox_phase;
using pp = process_phase;

}  // namespace

BOOST_AUTO_TEST_SUITE(sandbox_fsm_steps)

BOOST_AUTO_TEST_CASE(memory_pause_cuts_the_stream_and_resume_reattaches)
{
    auto f = make_fsm();
    run(f, {
               {"pause begins", pause_begin, sp::pausing, pp::attached, std::nullopt},
               {"the pause cuts the stream", stream_cut, sp::pausing, pp::suspended, want{false, false}},
               {"paused with memory", paused_memory, sp::paused, pp::suspended, want{false, false}},
               {"resume begins", resume_begin, sp::resuming, pp::suspended, std::nullopt},
               {"resumed: re-attach", resumed, sp::running, pp::suspended, want{false, true}},
               {"re-attached", reattached, sp::running, pp::attached, want{false, false}},
           });
    BOOST_TEST(!f.process(1).cut_expected());
    BOOST_TEST((f.process(1).exit() == std::nullopt));
}

BOOST_AUTO_TEST_CASE(a_stream_cut_noticed_after_the_pause_settled_is_still_the_pauses)
{
    // The reader sees the break only after the vendor answered: the pause marked it.
    auto f = make_fsm();
    run(f, {
               {"pause begins", pause_begin, sp::pausing, pp::attached, std::nullopt},
               {"paused with memory", paused_memory, sp::paused, pp::attached, std::nullopt},
               {"the break arrives late", stream_cut, sp::paused, pp::suspended, want{false, false}},
               {"resume begins", resume_begin, sp::resuming, pp::suspended, std::nullopt},
               {"resumed: re-attach", resumed, sp::running, pp::suspended, want{false, true}},
           });
}

BOOST_AUTO_TEST_CASE(a_refused_pause_reattaches_at_once)
{
    auto f = make_fsm();
    run(f, {
               {"pause begins", pause_begin, sp::pausing, pp::attached, std::nullopt},
               {"503: refused", refused, sp::running, pp::attached, want{false, false}},
               // The break the attempt caused arrives after the refusal: re-attach now.
               {"the break arrives", stream_cut, sp::running, pp::suspended, want{false, true}},
               {"re-attached", reattached, sp::running, pp::attached, std::nullopt},
               // The new stream was opened with no pause in flight: its break is an outcome.
               {"the process dies", stream_cut, sp::running, pp::unknown, want{true, false}},
           });
    BOOST_TEST_REQUIRE(f.process(1).exit().has_value());
    BOOST_TEST((f.process(1).exit()->outcome == exit_outcome::unknown));
    BOOST_TEST(!f.process(1).exit()->exit_code.has_value());
}

BOOST_AUTO_TEST_CASE(a_refused_pause_reattaches_a_process_it_cut)
{
    auto f = make_fsm();
    run(f, {
               {"pause begins", pause_begin, sp::pausing, pp::attached, std::nullopt},
               {"the pause cuts the stream", stream_cut, sp::pausing, pp::suspended, want{false, false}},
               {"503: refused: re-attach", refused, sp::running, pp::suspended, want{false, true}},
               {"a second refusal does not re-attach twice", refused, sp::running, pp::suspended, want{false, false}},
               {"re-attached", reattached, sp::running, pp::attached, want{false, false}},
           });
}

BOOST_AUTO_TEST_CASE(a_break_with_no_pause_is_the_outcome_never_an_exit_code)
{
    auto f = make_fsm();
    run(f, {{"the stream breaks", stream_cut, sp::running, pp::unknown, want{true, false}}});
    BOOST_TEST((f.process(1).exit()->outcome == exit_outcome::unknown));
    BOOST_TEST(f.process(1).exit()->status == "connection reset");
    // Later events change nothing.
    run(f, {{"a late end event", [](sandbox_fsm& g) { return none(g.end_event(1, ended(true, 0, "exit status 0"))); },
             sp::running, pp::unknown, want{false, false}}});
    BOOST_TEST(!f.process(1).exit()->exit_code.has_value());
}

BOOST_AUTO_TEST_CASE(filesystem_pause_is_a_reboot)
{
    auto f = make_fsm();
    run(f, {
               {"pause begins", pause_begin, sp::pausing, pp::attached, std::nullopt},
               {"paused without memory: gone", paused_filesystem, sp::paused, pp::unknown, want{true, false}},
           });
    BOOST_TEST(f.rebooted());
    BOOST_TEST((f.paused_kind() == snapshot_kind::filesystem));
    BOOST_TEST((f.process(1).exit()->outcome == exit_outcome::unknown));
    BOOST_TEST(static_cast<int>(f.may_attach(7)) == static_cast<int>(attach_verdict::gone));
    run(f, {
               {"resume begins", resume_begin, sp::resuming, pp::unknown, std::nullopt},
               {"resumed: nothing to re-attach", resumed, sp::running, pp::unknown, want{false, false}},
           });
    // A pid from before the reboot is never the same process; one started since is.
    BOOST_TEST(static_cast<int>(f.may_attach(7)) == static_cast<int>(attach_verdict::gone));
    f.process_added(9);
    BOOST_TEST(static_cast<int>(f.may_attach(9)) == static_cast<int>(attach_verdict::allowed));
}

BOOST_AUTO_TEST_CASE(attach_verdicts)
{
    auto f = make_fsm();
    BOOST_TEST(static_cast<int>(f.may_attach(7)) == static_cast<int>(attach_verdict::allowed));
    BOOST_TEST(static_cast<int>(f.may_attach(1234)) == static_cast<int>(attach_verdict::allowed));  // never rebooted
    (void)f.pause_begin();
    (void)f.pause_succeeded(snapshot_kind::memory, false);
    BOOST_TEST(static_cast<int>(f.may_attach(7)) == static_cast<int>(attach_verdict::paused));
    (void)f.kill_begin();
    (void)f.kill_succeeded();
    BOOST_TEST(static_cast<int>(f.may_attach(7)) == static_cast<int>(attach_verdict::gone));
}

BOOST_AUTO_TEST_CASE(already_paused_keeps_the_known_kind)
{
    auto f = make_fsm();
    (void)f.pause_begin();
    (void)f.pause_succeeded(snapshot_kind::filesystem, false);
    (void)f.pause_begin();
    auto effects = f.pause_succeeded(snapshot_kind::memory, true);
    BOOST_TEST(effects.empty());
    BOOST_TEST((f.paused_kind() == snapshot_kind::filesystem));
    // Unknown kind (paused elsewhere): the reply's request is all we know.
    sandbox_fsm g(target("tok", nullptr, "0.5.7"), sandbox_state::paused);
    (void)g.pause_begin();
    (void)g.pause_succeeded(snapshot_kind::memory, true);
    BOOST_TEST((g.paused_kind() == snapshot_kind::memory));
    BOOST_TEST(!g.rebooted());
}

BOOST_AUTO_TEST_CASE(concurrent_kills_make_one_vendor_call)
{
    auto f = make_fsm();
    // Table: each caller's kill_begin, then the vendor reply of the one in flight.
    BOOST_TEST(static_cast<int>(f.kill_begin()) == static_cast<int>(kill_step::call_vendor));
    BOOST_TEST(static_cast<int>(f.kill_begin()) == static_cast<int>(kill_step::wait));
    BOOST_TEST(static_cast<int>(f.phase()) == static_cast<int>(sp::killing));
    // The first kill failed: the phase settles and a waiter tries itself.
    f.kill_failed();
    BOOST_TEST(static_cast<int>(f.phase()) == static_cast<int>(sp::running));
    BOOST_TEST(static_cast<int>(f.kill_begin()) == static_cast<int>(kill_step::call_vendor));
    BOOST_TEST(static_cast<int>(f.kill_begin()) == static_cast<int>(kill_step::wait));
    run(f, {{"killed: every process is gone", [](sandbox_fsm& g) { return g.kill_succeeded(); }, sp::killed,
             pp::unknown, want{true, false}}});
    BOOST_TEST(static_cast<int>(f.kill_begin()) == static_cast<int>(kill_step::done));
    BOOST_TEST(f.process(1).exit()->status == "the sandbox was killed");
}

BOOST_AUTO_TEST_CASE(nothing_runs_after_kill)
{
    auto f = make_fsm();
    (void)f.kill_begin();
    (void)f.kill_succeeded();
    BOOST_TEST((f.activity("exec").error() == errc::not_found));
    BOOST_TEST((f.pause_begin().error() == errc::not_found));
    BOOST_TEST((f.resume_begin().error() == errc::not_found));
    // Late replies of calls made before the kill change nothing.
    BOOST_TEST(f.pause_succeeded(snapshot_kind::memory, false).empty());
    BOOST_TEST(f.resume_succeeded(target(nullptr, nullptr, nullptr)).empty());
    BOOST_TEST(f.observed(e2b::sandbox_state::running).empty());
    BOOST_TEST(static_cast<int>(f.state()) == static_cast<int>(sandbox_state::killed));
}

BOOST_AUTO_TEST_CASE(exec_admission_follows_the_phase)
{
    // Rows: the events so far -> whether exec may run, and its error.
    struct row {
        char const* what;
        std::function<void(sandbox_fsm&)> events;
        std::optional<errc> refused;
    };
    std::vector<row> const rows = {
        {"running", [](sandbox_fsm&) {}, std::nullopt},
        {"pause in flight (may be refused)", [](sandbox_fsm& f) { (void)f.pause_begin(); }, std::nullopt},
        {"paused",
         [](sandbox_fsm& f) {
             (void)f.pause_begin();
             (void)f.pause_succeeded(snapshot_kind::memory, false);
         },
         errc::paused},
        {"resume in flight",
         [](sandbox_fsm& f) {
             (void)f.pause_begin();
             (void)f.pause_succeeded(snapshot_kind::memory, false);
             (void)f.resume_begin();
         },
         errc::paused},
        {"refused pause",
         [](sandbox_fsm& f) {
             (void)f.pause_begin();
             (void)f.pause_refused();
         },
         std::nullopt},
        {"kill in flight", [](sandbox_fsm& f) { (void)f.kill_begin(); }, std::nullopt},
        {"killed",
         [](sandbox_fsm& f) {
             (void)f.kill_begin();
             (void)f.kill_succeeded();
         },
         errc::not_found},
        {"vanished (404)", [](sandbox_fsm& f) { (void)f.vanished(); }, errc::not_found},
        {"paused elsewhere", [](sandbox_fsm& f) { (void)f.observed(e2b::sandbox_state::paused); }, errc::paused},
    };
    for (auto const& r : rows) {
        BOOST_TEST_CONTEXT(r.what)
        {
            auto f = make_fsm();
            r.events(f);
            auto t = f.activity("exec");
            BOOST_TEST(t.has_value() == !r.refused.has_value());
            if (r.refused && !t) BOOST_TEST((t.error() == *r.refused));
        }
    }
}

BOOST_AUTO_TEST_CASE(a_resume_during_a_pause_waits_for_the_pause)
{
    auto f = make_fsm();
    run(f, {
               {"pause begins", pause_begin, sp::pausing, pp::attached, std::nullopt},
               {"the pause cuts the stream", stream_cut, sp::pausing, pp::suspended, want{false, false}},
               {"resume begins meanwhile", resume_begin, sp::pausing, pp::suspended, std::nullopt},
               {"resume answers first: no re-attach yet", resumed, sp::pausing, pp::suspended, want{false, false}},
               {"the pause is refused: now re-attach", refused, sp::running, pp::suspended, want{false, true}},
           });
}

BOOST_AUTO_TEST_CASE(a_reattach_that_finds_the_sandbox_paused_again_waits_for_the_next_resume)
{
    auto f = make_fsm();
    run(f, {
               {"pause begins", pause_begin, sp::pausing, pp::attached, std::nullopt},
               {"the pause cuts the stream", stream_cut, sp::pausing, pp::suspended, std::nullopt},
               {"paused", paused_memory, sp::paused, pp::suspended, std::nullopt},
               {"resume begins", resume_begin, sp::resuming, pp::suspended, std::nullopt},
               {"resumed: re-attach", resumed, sp::running, pp::suspended, want{false, true}},
               {"paused again before it connects", pause_begin, sp::pausing, pp::suspended, std::nullopt},
               {"paused", paused_memory, sp::paused, pp::suspended, std::nullopt},
               {"the re-attach fails: wait", [](sandbox_fsm& g) { return none(g.reattach_failed(1, "paused")); },
                sp::paused, pp::suspended, want{false, false}},
               {"resume begins", resume_begin, sp::resuming, pp::suspended, std::nullopt},
               {"resumed: re-attach again", resumed, sp::running, pp::suspended, want{false, true}},
               {"the process is gone", [](sandbox_fsm& g) { return none(g.reattach_failed(1, "process is gone")); },
                sp::running, pp::unknown, want{true, false}},
           });
    BOOST_TEST(f.process(1).exit()->status == "process is gone");
}

BOOST_AUTO_TEST_CASE(a_reattach_during_a_new_pause_expects_its_cut)
{
    auto f = make_fsm();
    run(f, {
               {"pause begins", pause_begin, sp::pausing, pp::attached, std::nullopt},
               {"503: refused", refused, sp::running, pp::attached, std::nullopt},
               {"the break arrives: re-attach", stream_cut, sp::running, pp::suspended, want{false, true}},
               {"another pause begins", pause_begin, sp::pausing, pp::suspended, std::nullopt},
               {"re-attached while it is in flight", reattached, sp::pausing, pp::attached, std::nullopt},
           });
    BOOST_TEST(f.process(1).cut_expected());
    run(f, {{"its cut is not an outcome", stream_cut, sp::pausing, pp::suspended, want{false, false}}});
}

BOOST_AUTO_TEST_CASE(release_stops_following)
{
    auto f = make_fsm();
    run(f, {
               {"pause begins", pause_begin, sp::pausing, pp::attached, std::nullopt},
               {"cut", stream_cut, sp::pausing, pp::suspended, std::nullopt},
               {"released", [](sandbox_fsm& g) { return none(g.released(1)); }, sp::pausing, pp::released,
                want{true, false}},
               {"refused: no re-attach of a released process", refused, sp::running, pp::released, want{false, false}},
           });
    BOOST_TEST((f.process(1).usable("process.write").error() == errc::invalid_argument));
    BOOST_TEST(!f.process(1).accepts_data());
    // A late re-attach result is dropped.
    auto a = f.reattached(1);
    BOOST_TEST(a.stop_reader);
}

BOOST_AUTO_TEST_CASE(release_after_the_end_keeps_the_outcome)
{
    auto f = make_fsm();
    (void)f.end_event(1, ended(true, 3, "exit status 3"));
    (void)f.released(1);
    BOOST_TEST(static_cast<int>(f.process(1).phase()) == static_cast<int>(pp::exited));
    BOOST_TEST((f.process(1).exit()->exit_code == 3));
    BOOST_TEST(f.process(1).usable("process.wait").has_value());
}

BOOST_AUTO_TEST_CASE(kill_of_a_process)
{
    // Rows: how the stream ends after SIGKILL was sent -> the recorded outcome.
    struct row {
        char const* what;
        std::function<process_actions(sandbox_fsm&)> end;
        exit_outcome outcome;
    };
    std::vector<row> const rows = {
        {"end event: signal", [](sandbox_fsm& f) { return f.end_event(1, ended(false, 0, "signal: killed")); },
         exit_outcome::killed},
        {"end event without a status", [](sandbox_fsm& f) { return f.end_event(1, ended(false, 0, "")); },
         exit_outcome::killed},
        {"the stream breaks", [](sandbox_fsm& f) { return f.stream_broken(1, "reset"); }, exit_outcome::killed},
        {"no end within the grace", [](sandbox_fsm& f) { return f.kill_grace_over(1); }, exit_outcome::killed},
        {"it exited first", [](sandbox_fsm& f) { return f.end_event(1, ended(true, 0, "exit status 0")); },
         exit_outcome::exited},
    };
    for (auto const& r : rows) {
        BOOST_TEST_CONTEXT(r.what)
        {
            auto f = make_fsm();
            f.kill_sent(1);
            auto a = r.end(f);
            BOOST_TEST(a.stop_reader);
            BOOST_TEST(a.notify);
            BOOST_TEST(f.process(1).terminal());
            BOOST_TEST(static_cast<int>(f.process(1).exit()->outcome) == static_cast<int>(r.outcome));
            // The grace passing afterwards changes nothing.
            auto late = f.kill_grace_over(1);
            BOOST_TEST(!late.notify);
            BOOST_TEST(static_cast<int>(f.process(1).exit()->outcome) == static_cast<int>(r.outcome));
        }
    }
    // A failed signal withdraws the request: a later break is unknown, not killed.
    auto f = make_fsm();
    f.kill_sent(1);
    f.kill_failed(1);
    (void)f.stream_broken(1, "reset");
    BOOST_TEST(static_cast<int>(f.process(1).exit()->outcome) == static_cast<int>(exit_outcome::unknown));
}

BOOST_AUTO_TEST_CASE(status_observations)
{
    auto f = make_fsm();
    run(f,
        {
            {"paused elsewhere", [](sandbox_fsm& g) { return g.observed(e2b::sandbox_state::paused); }, sp::paused,
             pp::attached, std::nullopt},
            {"its cut arrives", stream_cut, sp::paused, pp::suspended, want{false, false}},
            {"resumed elsewhere: re-attach", [](sandbox_fsm& g) { return g.observed(e2b::sandbox_state::running); },
             sp::running, pp::suspended, want{false, true}},
            {"404: vanished", [](sandbox_fsm& g) { return g.vanished(); }, sp::killed, pp::unknown, want{true, false}},
        });
}

BOOST_AUTO_TEST_CASE(removed_processes_are_forgotten)
{
    auto f = make_fsm();
    f.process_removed(1);
    BOOST_TEST(f.pause_begin().has_value());
    BOOST_TEST(f.pause_succeeded(snapshot_kind::filesystem, false).empty());
    BOOST_TEST(f.stream_broken(1, "x").notify == false);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(envd_target_merge)

BOOST_AUTO_TEST_CASE(merge_rule_table)
{
    struct row {
        char const* what;
        e2b::envd_target reply;
        e2b::envd_target merged;
    };
    auto const known = target("tok-old", "old.example", "0.5.7");
    std::vector<row> const rows = {
        {"the reply lacks everything: keep all", target(nullptr, nullptr, nullptr), known},
        {"a new token only", target("tok-new", nullptr, nullptr), target("tok-new", "old.example", "0.5.7")},
        {"a new domain only", target(nullptr, "new.example", nullptr), target("tok-old", "new.example", "0.5.7")},
        {"a new version only", target(nullptr, nullptr, "0.5.2"), target("tok-old", "old.example", "0.5.2")},
        {"a full reply wins", target("tok-new", "new.example", "0.6.0"), target("tok-new", "new.example", "0.6.0")},
    };
    for (auto const& r : rows) {
        BOOST_TEST_CONTEXT(r.what)
        {
            auto m = merge_envd_target(known, r.reply);
            BOOST_TEST(m.sandbox_id == "sb-1");
            BOOST_TEST((m.access_token == r.merged.access_token));
            BOOST_TEST((m.domain == r.merged.domain));
            BOOST_TEST(m.envd_version == r.merged.envd_version);
        }
    }
}

BOOST_AUTO_TEST_CASE(resume_applies_the_merge_rule)
{
    sandbox_fsm f(target("tok-old", "old.example", "0.5.7"), sandbox_state::paused);
    BOOST_TEST_REQUIRE(f.resume_begin().has_value());
    (void)f.resume_succeeded(target(nullptr, nullptr, nullptr));
    BOOST_TEST((f.target().access_token == std::optional<std::string>("tok-old")));
    BOOST_TEST((f.target().domain == std::optional<std::string>("old.example")));
    BOOST_TEST(f.target().envd_version == "0.5.7");
    BOOST_TEST_REQUIRE(f.activity("exec").has_value());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(process_end_mapping)

BOOST_AUTO_TEST_CASE(map_end_event_table)
{
    struct row {
        e2b::end_event end;
        bool kill_requested;
        exit_outcome outcome;
        std::optional<std::int32_t> code;
    };
    std::vector<row> const rows = {
        {ended(true, 0, "exit status 0"), false, exit_outcome::exited, 0},
        {ended(true, 2, "exit status 2"), true, exit_outcome::exited, 2},
        {ended(false, 0, "signal: terminated"), false, exit_outcome::killed, std::nullopt},
        {ended(false, 0, ""), true, exit_outcome::killed, std::nullopt},
        {ended(false, 0, "oom"), false, exit_outcome::unknown, std::nullopt},
    };
    for (auto const& r : rows) {
        BOOST_TEST_CONTEXT(r.end.status)
        {
            auto e = map_end_event(r.end, r.kill_requested);
            BOOST_TEST(static_cast<int>(e.outcome) == static_cast<int>(r.outcome));
            BOOST_TEST((e.exit_code == r.code));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
