// prism-e2b metrics SANDBOX [--start S] [--end S] [--json]: the sandbox's
// resource samples (GET /sandboxes/{id}/metrics), oldest first.
#include <prism_e2b/e2b/metrics.hpp>

#include "cli/commands.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstdio>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::cli {
namespace {

struct metrics_options {
    std::string sandbox;
    std::optional<std::int64_t> start, end;
    output_format format = output_format::text;
};

asio::awaitable<int> metrics(std::shared_ptr<e2b::client> c, metrics_options o)
{
    e2b::metrics_params p{o.start, o.end};
    auto r = co_await c->async_get_sandbox_metrics(o.sandbox, p);
    if (!r) co_return report("metrics", r.error());
    if (o.format == output_format::json) {
        json::array out;
        for (auto const& m : *r)  // the API's own field names
            out.push_back(json::object{{"timestampUnix", m.timestamp_unix},
                                       {"cpuCount", m.cpu_count},
                                       {"cpuUsedPct", m.cpu_used_pct},
                                       {"memUsed", m.mem_used},
                                       {"memTotal", m.mem_total},
                                       {"memCache", m.mem_cache},
                                       {"diskUsed", m.disk_used},
                                       {"diskTotal", m.disk_total}});
        print_json(out);
        co_return exit_ok;
    }
    if (r->empty()) {
        std::cout << "no metrics yet" << std::endl;
        co_return exit_ok;
    }
    std::printf("%-12s %5s %7s %14s %14s %14s %14s\n", "TIMESTAMP", "CPUS", "CPU%", "MEM USED", "MEM TOTAL",
                "DISK USED", "DISK TOTAL");
    for (auto const& m : *r)
        std::printf("%-12lld %5d %7.1f %14lld %14lld %14lld %14lld\n", static_cast<long long>(m.timestamp_unix),
                    m.cpu_count, m.cpu_used_pct, static_cast<long long>(m.mem_used),
                    static_cast<long long>(m.mem_total), static_cast<long long>(m.disk_used),
                    static_cast<long long>(m.disk_total));
    std::fflush(stdout);
    co_return exit_ok;
}

}  // namespace

void add_metrics_command(CLI::App& app, run_state& st)
{
    auto o = std::make_shared<metrics_options>();
    auto* cmd = app.add_subcommand("metrics", "show a sandbox's resource metrics (CPU, memory, disk), oldest first");
    cmd->add_option("sandbox", o->sandbox, "the sandbox id")->required();
    cmd->add_option("--start", o->start, "from this Unix time (seconds)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--end", o->end, "until this Unix time (seconds)")->check(CLI::NonNegativeNumber);
    add_format_options(cmd, o->format);
    cmd->callback([o, &st] {
        st.exit =
            run_with_client("metrics", [o = *o](std::shared_ptr<e2b::client> c) { return metrics(std::move(c), o); });
    });
}

}  // namespace prism_e2b::cli
