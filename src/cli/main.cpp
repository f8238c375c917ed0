// prism-e2b: a command-line client of E2B built on the native C++ client,
// with the commands of the official `e2b sandbox`. CLI11 parses; each command
// group adds its subcommands (commands.hpp). Usage errors exit 64, help and
// --version 0.
#include <prism_e2b/version.hpp>

#include "cli/commands.hpp"

#include <iostream>

using namespace prism_e2b::cli;

namespace {

std::string environment_help()
{
    return "environment (as the official E2B SDK):\n"
           "  E2B_API_KEY        API key (required)\n"
           "  E2B_DOMAIN         domain, default e2b.app\n"
           "  E2B_API_URL        control-plane URL, default https://api.<domain>\n"
           "  E2B_SANDBOX_URL    one envd URL for every sandbox; default https://sandbox.<domain> for E2B's\n"
           "                     own domains, else https://49983-<id>.<domain>\n"
           "  PRISM_E2B_CA_FILE  extra CA bundle (PEM) to trust; peers are always verified\n\n";
}

/// `help [COMMAND]`: the same text as `[COMMAND] --help`, on stdout, exit 0.
void add_help_command(CLI::App& app)
{
    auto* cmd = app.add_subcommand("help", "show the help of prism-e2b or of one command");
    auto name = std::make_shared<std::string>();
    cmd->add_option("command", *name, "the command to describe");
    cmd->callback([&app, name] {
        if (name->empty()) {
            std::cout << app.help();
            return;
        }
        for (auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
            if (sub->get_name() == *name) {
                std::cout << sub->help(app.get_name());
                return;
            }
        }
        throw CLI::ValidationError("help", "unknown command '" + *name + "'");
    });
    cmd->footer(exit_codes_help());
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"prism-e2b: E2B sandboxes from the command line (the commands of `e2b sandbox`)", "prism-e2b"};
    app.set_version_flag("--version", std::string("prism-e2b ") + PRISM_E2B_VERSION_STRING);
    app.require_subcommand(1);
    app.footer(environment_help() + exit_codes_help());
    run_state st;
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--") st.saw_double_dash = true;
    add_help_command(app);
    add_create_command(app, st);
    add_query_commands(app, st);
    add_lifecycle_commands(app, st);
    add_exec_command(app, st);
    add_files_commands(app, st);
    add_connect_command(app, st);
    add_metrics_command(app, st);
    add_logs_command(app, st);
    add_snapshot_commands(app, st);
    add_fork_command(app, st);
    add_volume_commands(app, st);
    add_demo_command(app, st);
    add_bench_command(app, st);
    for (auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
        if (sub->get_footer().empty()) sub->footer(exit_codes_help());
    try {
        app.parse(argc, argv);
    } catch (CLI::CallForHelp const& e) {
        return app.exit(e);
    } catch (CLI::CallForAllHelp const& e) {
        return app.exit(e);
    } catch (CLI::CallForVersion const& e) {
        return app.exit(e);
    } catch (CLI::ParseError const& e) {
        return fail(exit_usage, std::string(e.what()) + " (see prism-e2b --help)");  // one line, like every error
    }
    return st.exit;
}
