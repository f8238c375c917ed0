// prism-e2b pause / resume / kill: sandboxes' lifecycle. kill takes ids, or
// --all with an optional metadata filter (as `e2b sandbox kill --all`).
#include "cli/commands.hpp"

#include <iostream>

namespace asio = boost::asio;

namespace prism_e2b::cli {
namespace {

void add_pause(CLI::App& app, run_state& st)
{
    struct options {
        std::string sandbox;
        bool no_memory = false;
    };
    auto o = std::make_shared<options>();
    auto* cmd = app.add_subcommand("pause", "pause a sandbox (with its memory unless --no-memory)");
    cmd->add_option("sandbox", o->sandbox, "the sandbox id")->required();
    cmd->add_flag("--no-memory", o->no_memory, "keep the filesystem only: resume is a reboot");
    cmd->callback([o, &st] {
        st.exit = run_with_client("pause", [o = *o](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
            auto sandbox = o.sandbox;
            bool const memory = !o.no_memory;
            auto r = co_await c->async_pause_sandbox(sandbox, memory);
            if (!r) co_return report("pause", r.error());
            using k = e2b::pause_reply::kind;
            switch (r->outcome) {
                case k::paused:
                    std::cout << "paused" << (memory ? "" : " (filesystem only)") << std::endl;
                    co_return exit_ok;
                case k::already_paused:
                    std::cout << "already paused" << std::endl;
                    co_return exit_ok;
                case k::not_found:
                    co_return fail(exit_not_found, "pause: sandbox " + sandbox + " not found");
                case k::busy:
                    co_return fail(exit_vendor, "pause: E2B is busy, the sandbox keeps running; retry later" +
                                                    (r->message.empty() ? std::string() : " (" + r->message + ")"));
            }
            co_return exit_vendor;
        });
    });
}

void add_resume(CLI::App& app, run_state& st)
{
    struct options {
        std::string sandbox;
        long long timeout = 300;
    };
    auto o = std::make_shared<options>();
    auto* cmd = app.add_subcommand("resume", "resume a paused sandbox (or extend a running one's life)");
    cmd->add_option("sandbox", o->sandbox, "the sandbox id")->required();
    cmd->add_option("--timeout", o->timeout, "seconds it lives from now (default 300)")
        ->check(CLI::Range(1LL, 86400LL * 30));
    cmd->callback([o, &st] {
        st.exit = run_with_client("resume", [o = *o](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
            auto sandbox = o.sandbox;
            auto r = co_await c->async_connect_sandbox(sandbox, std::chrono::seconds(o.timeout));
            if (!r) co_return report("resume", r.error());
            std::cout << (r->outcome == e2b::connect_result::kind::resumed ? "resumed" : "already running")
                      << std::endl;
            co_return exit_ok;
        });
    });
}

/// Kills each id; prints "killed ID" per sandbox. 66 when one was not there.
asio::awaitable<int> kill_each(e2b::client& c, std::vector<std::string> ids)
{
    int rc = exit_ok;
    for (auto const& id : ids) {
        auto sandbox = id;
        auto r = co_await c.async_kill_sandbox(sandbox);
        if (!r) {
            rc = report("kill", r.error());
            continue;
        }
        if (!*r) {
            if (rc == exit_ok) rc = exit_not_found;
            fail(exit_not_found, "kill: sandbox " + id + " not found (already gone)");
            continue;
        }
        std::cout << "killed " << id << std::endl;
    }
    co_return rc;
}

void add_kill(CLI::App& app, run_state& st)
{
    struct options {
        std::vector<std::string> sandboxes;
        bool all = false;
        std::vector<std::string> labels;
    };
    auto o = std::make_shared<options>();
    auto* cmd = app.add_subcommand("kill", "kill sandboxes: the ids given, or --all (of the --label filter)");
    cmd->alias("kl");
    auto* ids = cmd->add_option("sandbox", o->sandboxes, "sandbox ids");
    auto* all = cmd->add_flag("-a,--all", o->all, "kill every sandbox (running and paused) the filter matches");
    cmd->add_option("-l,--label,--metadata", o->labels, "with --all: only sandboxes with metadata k=v (repeatable)")
        ->allow_extra_args(false)
        ->check(label_validator())
        ->needs(all);
    ids->excludes(all);
    cmd->callback([o, &st] {
        if (o->sandboxes.empty() && !o->all) throw CLI::ValidationError("kill", "give sandbox ids or --all");
        st.exit = run_with_client("kill", [o = *o](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
            if (!o.all) co_return co_await kill_each(*c, o.sandboxes);
            e2b::list_params p;
            for (auto const& l : o.labels) p.metadata.insert(split_label(l));
            p.states = {e2b::sandbox_state::running, e2b::sandbox_state::paused};
            std::vector<std::string> found;
            for (int page = 0; page < 10000; ++page) {
                auto r = co_await c->async_list_sandboxes(p);
                if (!r) co_return report("kill", r.error());
                for (auto const& s : r->sandboxes) found.push_back(s.sandbox_id);
                if (!r->next_token) break;
                p.next_token = r->next_token;
            }
            if (found.empty()) std::cout << "no sandbox matched" << std::endl;
            co_return co_await kill_each(*c, std::move(found));
        });
    });
}

}  // namespace

void add_lifecycle_commands(CLI::App& app, run_state& st)
{
    add_pause(app, st);
    add_resume(app, st);
    add_kill(app, st);
}

}  // namespace prism_e2b::cli
