// prism-e2b fork ID [--count N] [--timeout S] [--json]: sandboxes started from one
// snapshot of a running sandbox, which runs on (`e2b sandbox fork`).
#include "cli/commands.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::cli {

void add_fork_command(CLI::App& app, run_state& st)
{
    struct options {
        std::string sandbox;
        std::optional<std::uint32_t> count;
        std::optional<long long> timeout;
        output_format format = output_format::text;
    };
    auto o = std::make_shared<options>();
    auto* cmd = app.add_subcommand("fork", "start sandboxes from a snapshot of a running sandbox; print their ids");
    cmd->add_option("sandbox", o->sandbox, "the sandbox to fork")->required();
    cmd->add_option("-n,--count", o->count, "forks to start (the server's default: 1)")->check(CLI::Range(1, 100));
    cmd->add_option("--timeout", o->timeout, "seconds each fork lives (the server's default: 15)")
        ->check(CLI::Range(1LL, 86400LL * 30));
    add_format_options(cmd, o->format);
    cmd->callback([o, &st] {
        e2b::fork_params params;
        params.count = o->count;
        if (o->timeout) params.timeout = std::chrono::seconds(*o->timeout);
        st.exit = run_with_client(
            "fork",
            [params, id = o->sandbox, format = o->format](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
                auto p = params;
                auto forks = co_await c->async_fork_sandbox(id, p);
                if (!forks) co_return report("fork", forks.error());
                // Every fork that started is printed (the caller owns it), then the first failure decides the exit.
                int exit = exit_ok;
                json::array out;
                for (auto const& f : *forks) {
                    if (f) {
                        // The envd access token is a secret: never printed.
                        if (format == output_format::json)
                            out.push_back(json::object{{"sandboxID", f->sandbox_id}});
                        else
                            std::cout << f->sandbox_id << std::endl;
                    } else {
                        if (format == output_format::json) out.push_back(json::object{{"error", f.error().message()}});
                        int const code = report("fork", f.error());
                        if (exit == exit_ok) exit = code;
                    }
                }
                if (format == output_format::json) print_json(out);
                co_return exit;
            });
    });
}

}  // namespace prism_e2b::cli
