// prism-e2b info SANDBOX and prism-e2b list [--label k=v]... [--state S]... [--limit N],
// both with --json. The envd access token is a secret: never printed.
#include "cli/commands.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::cli {
namespace {

std::string labels_of(e2b::metadata_map const& m)
{
    std::string s;
    for (auto const& [k, v] : m) s += (s.empty() ? "" : ",") + k + "=" + v;
    return s;
}

char const* state_name(e2b::sandbox_state s) { return s == e2b::sandbox_state::paused ? "paused" : "running"; }

/// The API's own field names (SandboxDetail), so scripts read what the REST API says.
json::object to_json(e2b::sandbox_info const& s)
{
    json::object meta;
    for (auto const& [k, v] : s.metadata) meta[k] = v;
    json::object o{{"sandboxID", s.sandbox_id},
                   {"templateID", s.template_id},
                   {"alias", s.alias},
                   {"state", state_name(s.state)},
                   {"metadata", std::move(meta)},
                   {"startedAt", s.started_at},
                   {"endAt", s.end_at},
                   {"envdVersion", s.envd_version},
                   {"cpuCount", s.cpu_count},
                   {"memoryMB", s.memory_mb},
                   {"diskSizeMB", s.disk_size_mb}};
    if (s.lifecycle)
        o["lifecycle"] = json::object{{"autoResume", s.lifecycle->auto_resume}, {"onTimeout", s.lifecycle->on_timeout}};
    if (!s.volume_mounts.empty()) {
        json::array mounts;
        for (auto const& m : s.volume_mounts) mounts.push_back(json::object{{"name", m.name}, {"path", m.path}});
        o["volumeMounts"] = std::move(mounts);
    }
    return o;
}

void print_table(std::vector<e2b::sandbox_info> const& rows)
{
    std::vector<std::vector<std::string>> cells{{"SANDBOX ID", "STATE", "TEMPLATE", "STARTED AT", "END AT", "LABELS"}};
    for (auto const& s : rows)
        cells.push_back(
            {s.sandbox_id, state_name(s.state), s.template_id, s.started_at, s.end_at, labels_of(s.metadata)});
    std::vector<std::size_t> width(cells.front().size(), 0);
    for (auto const& r : cells)
        for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    for (auto const& r : cells) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i)
            line += i + 1 == r.size() ? r[i] : r[i] + std::string(width[i] - r[i].size() + 2, ' ');
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::cout << line << "\n";
    }
    std::cout.flush();
}

void add_info(CLI::App& app, run_state& st)
{
    struct options {
        std::string sandbox;
        output_format format = output_format::text;
    };
    auto o = std::make_shared<options>();
    auto* cmd = app.add_subcommand("info", "show a sandbox (state, template, times, labels)");
    cmd->add_option("sandbox", o->sandbox, "the sandbox id")->required();
    add_format_options(cmd, o->format);
    cmd->callback([o, &st] {
        st.exit = run_with_client("info", [o = *o](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
            auto sandbox = o.sandbox;
            auto r = co_await c->async_get_sandbox_info(sandbox);
            if (!r) co_return report("info", r.error());
            if (o.format == output_format::json) {
                print_json(to_json(*r));
                co_return exit_ok;
            }
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
            for (auto const& m : r->volume_mounts) std::cout << "volume: " << m.name << " at " << m.path << "\n";
            std::cout.flush();
            co_return exit_ok;
        });
    });
}

void add_list(CLI::App& app, run_state& st)
{
    struct options {
        std::vector<std::string> labels;
        std::vector<std::string> states;
        std::size_t limit = 0;
        std::optional<std::string> template_id, started_after, order;
        output_format format = output_format::text;
    };
    auto o = std::make_shared<options>();
    auto* cmd = app.add_subcommand("list", "list sandboxes (every page), with a header in text mode");
    cmd->alias("ls");
    cmd->add_option("-l,--label,--metadata", o->labels, "only sandboxes with metadata k=v (repeatable; all must match)")
        ->allow_extra_args(false)
        ->check(label_validator());
    cmd->add_option("-s,--state", o->states, "only running or paused ones (repeatable, or comma-separated)")
        ->delimiter(',')
        ->check(CLI::IsMember({"running", "paused"}));
    cmd->add_option("--limit", o->limit, "list at most N sandboxes")->check(CLI::PositiveNumber);
    cmd->add_option("-t,--template", o->template_id, "only sandboxes of this template id or alias");
    cmd->add_option("--started-after", o->started_after, "only sandboxes started at or after this RFC 3339 time");
    cmd->add_option("--order", o->order, "by start time: asc or desc (the server's default: desc)")
        ->check(CLI::IsMember({"asc", "desc"}));
    add_format_options(cmd, o->format);
    cmd->callback([o, &st] {
        e2b::list_params params;
        params.template_id = o->template_id;
        params.started_after = o->started_after;
        if (o->order) params.ascending = *o->order == "asc";
        for (auto const& l : o->labels) params.metadata.insert(split_label(l));
        for (auto const& s : o->states)
            params.states.push_back(s == "paused" ? e2b::sandbox_state::paused : e2b::sandbox_state::running);
        if (o->limit > 0) params.limit = static_cast<std::uint32_t>(std::min<std::size_t>(o->limit, 100));
        st.exit = run_with_client("list", [params, o = *o](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
            auto p = params;
            std::vector<e2b::sandbox_info> all;
            // A server that never stops paging is an error, never a silent stop.
            constexpr int max_pages = 10000;
            for (int page = 0;; ++page) {
                if (page == max_pages)
                    co_return report("list", error(errc::limit_exceeded, "the server sent more than " +
                                                                             std::to_string(max_pages) + " pages"));
                auto r = co_await c->async_list_sandboxes(p);
                if (!r) co_return report("list", r.error());
                for (auto& s : r->sandboxes) all.push_back(std::move(s));
                if (!r->next_token || (o.limit > 0 && all.size() >= o.limit)) break;
                p.next_token = r->next_token;
            }
            if (o.limit > 0 && all.size() > o.limit) all.resize(o.limit);
            if (o.format == output_format::json) {
                json::array out;
                for (auto const& s : all) out.push_back(to_json(s));
                print_json(out);
            } else {
                print_table(all);
            }
            co_return exit_ok;
        });
    });
}

}  // namespace

void add_query_commands(CLI::App& app, run_state& st)
{
    add_list(app, st);
    add_info(app, st);
}

}  // namespace prism_e2b::cli
