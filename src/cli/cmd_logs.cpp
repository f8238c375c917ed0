// prism-e2b logs SANDBOX [--level L] [--search S] [--limit N] [--backward] [--json]:
// the sandbox's log entries (GET /v2/sandboxes/{id}/logs), as `e2b sandbox logs`.
#include "cli/commands.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::cli {
namespace {

struct logs_options {
    std::string sandbox;
    e2b::logs_params params;
    std::uint32_t limit = 0;
    output_format format = output_format::text;
};

asio::awaitable<int> logs(std::shared_ptr<e2b::client> c, logs_options o)
{
    if (o.limit > 0) o.params.limit = o.limit;
    auto r = co_await c->async_get_sandbox_logs(o.sandbox, o.params);
    if (!r) co_return report("logs", r.error());
    if (o.format == output_format::json) {
        json::array out;
        for (auto const& e : *r) {
            json::object fields;
            for (auto const& [k, v] : e.fields) fields[k] = v;
            out.push_back(json::object{
                {"timestamp", e.timestamp}, {"level", e.level}, {"message", e.message}, {"fields", fields}});
        }
        print_json(out);
        co_return exit_ok;
    }
    for (auto const& e : *r) std::cout << e.timestamp << "  " << e.level << "  " << e.message << "\n";
    std::cout.flush();
    co_return exit_ok;
}

}  // namespace

void add_logs_command(CLI::App& app, run_state& st)
{
    auto o = std::make_shared<logs_options>();
    auto* cmd = app.add_subcommand("logs", "show a sandbox's log entries, oldest first");
    cmd->add_option("sandbox", o->sandbox, "the sandbox id")->required();
    cmd->add_option("--level", o->params.level, "only entries at this level or above")
        ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
    cmd->add_option("--search", o->params.search, "only entries whose message contains this text");
    cmd->add_option("--limit", o->limit, "at most N entries (the server caps at 1000)")->check(CLI::Range(1u, 1000u));
    cmd->add_option("--cursor", o->params.cursor, "from this time, Unix milliseconds")->check(CLI::NonNegativeNumber);
    cmd->add_flag("--backward", o->params.backward, "newest first");
    add_format_options(cmd, o->format);
    cmd->footer(exit_codes_help());
    cmd->callback([o, &st] {
        st.exit = run_with_client("logs", [o = *o](std::shared_ptr<e2b::client> c) { return logs(std::move(c), o); });
    });
}

}  // namespace prism_e2b::cli
