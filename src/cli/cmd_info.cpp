// prism-e2b info SANDBOX and prism-e2b list [--label k=v]... [--state S]
#include "cli/commands.hpp"

#include <iostream>

namespace asio = boost::asio;

namespace prism_e2b::cli {
namespace {

std::string labels_of(e2b::metadata_map const& m)
{
    std::string s;
    for (auto const& [k, v] : m) s += (s.empty() ? "" : ",") + k + "=" + v;
    return s;
}

char const* state_name(e2b::sandbox_state s) { return s == e2b::sandbox_state::paused ? "paused" : "running"; }

int info(std::vector<std::string> const& args)
{
    if (args.size() != 1 || args[0].rfind("-", 0) == 0) return usage_error("info", "expected exactly one SANDBOX");
    return run_with_client("info", [id = args[0]](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
        auto sandbox = id;
        auto r = co_await c->get_sandbox_info(sandbox);
        if (!r) co_return report("info", r.error());
        // The envd access token is a secret: never printed.
        std::cout << "sandbox_id: " << r->sandbox_id << "\n"
                  << "template_id: " << r->template_id << "\n"
                  << "state: " << state_name(r->state) << "\n"
                  << "started_at: " << r->started_at << "\n"
                  << "end_at: " << r->end_at << "\n"
                  << "envd_version: " << r->envd_version << "\n"
                  << "cpu_count: " << r->cpu_count << "\n"
                  << "memory_mb: " << r->memory_mb << "\n"
                  << "disk_size_mb: " << r->disk_size_mb << "\n"
                  << "labels: " << labels_of(r->metadata) << "\n";
        if (r->lifecycle)
            std::cout << "on_timeout: " << r->lifecycle->on_timeout << "\n"
                      << "auto_resume: " << (r->lifecycle->auto_resume ? "true" : "false") << "\n";
        std::cout.flush();
        co_return exit_ok;
    });
}

int list(std::vector<std::string> const& args)
{
    e2b::list_params params;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--label") {
            auto kv = i + 1 < args.size() ? parse_label(args[++i]) : std::nullopt;
            if (!kv) return usage_error("list", "--label needs k=v");
            params.metadata[kv->first] = kv->second;
        } else if (args[i] == "--state" && i + 1 < args.size()) {
            auto const& s = args[++i];
            if (s == "running")
                params.states.push_back(e2b::sandbox_state::running);
            else if (s == "paused")
                params.states.push_back(e2b::sandbox_state::paused);
            else
                return usage_error("list", "--state is running or paused");
        } else {
            return usage_error("list", "unexpected argument '" + args[i] + "'");
        }
    }
    return run_with_client("list", [params](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
        auto p = params;
        // A server that never stops paging is an error, never a silent stop.
        constexpr int max_pages = 10000;
        for (int page = 0;; ++page) {
            if (page == max_pages)
                co_return report("list", error(errc::limit_exceeded,
                                               "the server sent more than " + std::to_string(max_pages) + " pages"));
            auto r = co_await c->list_sandboxes(p);
            if (!r) co_return report("list", r.error());
            for (auto const& s : r->sandboxes)
                std::cout << s.sandbox_id << "\t" << state_name(s.state) << "\t" << s.template_id << "\t"
                          << s.started_at << "\t" << labels_of(s.metadata) << "\n";
            if (!r->next_token) break;
            p.next_token = r->next_token;
        }
        std::cout.flush();
        co_return exit_ok;
    });
}

bool const r1 = register_command({"info", "info SANDBOX", "show a sandbox (state, template, times, labels)", info});
bool const r2 = register_command({"list", "list [--label k=v]... [--state running|paused]",
                                  "list sandboxes (id, state, template, started, labels), every page", list});

}  // namespace
}  // namespace prism_e2b::cli
