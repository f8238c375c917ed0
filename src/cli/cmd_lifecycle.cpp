// prism-e2b pause / resume / kill: one sandbox's lifecycle.
#include "cli/commands.hpp"

#include <iostream>

namespace asio = boost::asio;

namespace prism_e2b::cli {
namespace {

int pause(std::vector<std::string> const& args)
{
    std::optional<std::string> id;
    bool memory = true;
    for (auto const& a : args) {
        if (a == "--no-memory")
            memory = false;
        else if (!id && a.rfind("-", 0) != 0)
            id = a;
        else
            return usage_error("pause", "unexpected argument '" + a + "'");
    }
    if (!id) return usage_error("pause", "missing SANDBOX");
    return run_with_client("pause", [id = *id, memory](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
        auto sandbox = id;
        auto r = co_await c->pause_sandbox(sandbox, memory);
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
}

int resume(std::vector<std::string> const& args)
{
    std::optional<std::string> id;
    long long timeout = 300;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--timeout") {
            auto n = i + 1 < args.size() ? parse_count(args[++i]) : std::nullopt;
            if (!n || *n == 0) return usage_error("resume", "--timeout needs whole seconds > 0");
            timeout = *n;
        } else if (!id && args[i].rfind("-", 0) != 0) {
            id = args[i];
        } else {
            return usage_error("resume", "unexpected argument '" + args[i] + "'");
        }
    }
    if (!id) return usage_error("resume", "missing SANDBOX");
    return run_with_client("resume", [id = *id, timeout](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
        auto sandbox = id;
        auto r = co_await c->connect_sandbox(sandbox, std::chrono::seconds(timeout));
        if (!r) co_return report("resume", r.error());
        std::cout << (r->outcome == e2b::connect_result::kind::resumed ? "resumed" : "already running") << std::endl;
        co_return exit_ok;
    });
}

int kill(std::vector<std::string> const& args)
{
    if (args.size() != 1 || args[0].rfind("-", 0) == 0) return usage_error("kill", "expected exactly one SANDBOX");
    return run_with_client("kill", [id = args[0]](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
        auto sandbox = id;
        auto r = co_await c->kill_sandbox(sandbox);
        if (!r) co_return report("kill", r.error());
        if (!*r) co_return fail(exit_not_found, "kill: sandbox " + sandbox + " not found (already gone)");
        std::cout << "killed" << std::endl;
        co_return exit_ok;
    });
}

bool const r1 = register_command({"pause", "pause SANDBOX [--no-memory]",
                                  "pause a sandbox (with memory unless --no-memory: filesystem only)", pause});
bool const r2 =
    register_command({"resume", "resume SANDBOX [--timeout S]",
                      "resume a paused sandbox (or extend a running one) for S seconds (default 300)", resume});
bool const r3 = register_command({"kill", "kill SANDBOX", "kill a sandbox", kill});

}  // namespace
}  // namespace prism_e2b::cli
