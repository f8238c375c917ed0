// prism-e2b create [--template T] [--timeout S] [--label k=v]... [--json]
#include "cli/commands.hpp"

#include <boost/json/object.hpp>

#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::cli {

void add_create_command(CLI::App& app, run_state& st)
{
    struct options {
        std::string template_id = "base";
        long long timeout = 300;
        std::vector<std::string> labels;
        std::vector<std::string> volumes;
        output_format format = output_format::text;
    };
    auto o = std::make_shared<options>();
    auto* cmd = app.add_subcommand("create", "create a sandbox and print its id");
    cmd->add_option("-t,--template", o->template_id, "template name or id (default base)")
        ->check([](std::string const& s) { return s.empty() ? std::string("must not be empty") : std::string(); });
    cmd->add_option("--timeout", o->timeout, "seconds the sandbox lives (default 300)")
        ->check(CLI::Range(1LL, 86400LL * 30));
    cmd->add_option("-l,--label,--metadata", o->labels, "metadata k=v stored with the sandbox (repeatable)")
        ->allow_extra_args(false)
        ->check(label_validator());
    cmd->add_option("-v,--volume", o->volumes, "mount a volume: NAME:/path (repeatable)")
        ->allow_extra_args(false)
        ->check([](std::string const& s) {
            auto const colon = s.find(':');
            return colon == 0 || colon == std::string::npos || colon + 1 == s.size() || s[colon + 1] != '/'
                       ? std::string("must be NAME:/absolute/path")
                       : std::string();
        });
    add_format_options(cmd, o->format);
    cmd->callback([o, &st] {
        e2b::create_sandbox_params params;
        params.template_id = o->template_id;
        params.timeout = std::chrono::seconds(o->timeout);
        for (auto const& l : o->labels) params.metadata.insert(split_label(l));
        for (auto const& v : o->volumes) {
            auto const colon = v.find(':');
            params.volume_mounts.push_back({v.substr(0, colon), v.substr(colon + 1)});
        }
        st.exit = run_with_client("create",
                                  [params, format = o->format](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
                                      auto p = params;
                                      auto h = co_await c->async_create_sandbox(p);
                                      if (!h) co_return report("create", h.error());
                                      if (format == output_format::json) {
                                          // The envd access token is a secret: never printed.
                                          json::object out{{"sandboxID", h->sandbox_id},
                                                           {"templateID", h->template_id},
                                                           {"alias", h->alias},
                                                           {"envdVersion", h->envd_version}};
                                          if (h->domain) out["domain"] = *h->domain;
                                          print_json(out);
                                      } else {
                                          std::cout << h->sandbox_id << std::endl;
                                      }
                                      co_return exit_ok;
                                  });
    });
}

}  // namespace prism_e2b::cli
