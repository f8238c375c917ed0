// prism-e2b: a command-line client of E2B built on the native C++ client.
// Subcommands register themselves in the command table (commands.hpp).
#include "cli/commands.hpp"

#include <iostream>
#include <string>
#include <vector>

using namespace prism_e2b::cli;

namespace {

void print_help(std::ostream& os)
{
    os << "usage: prism-e2b <command> [arguments]\n\ncommands:\n";
    for (auto const& c : registered_commands()) {
        os << "  " << c.usage << "\n      " << c.summary << "\n";
    }
    os << "\nenvironment (as the official E2B SDK):\n"
          "  E2B_API_KEY      API key (required)\n"
          "  E2B_DOMAIN       domain, default e2b.app\n"
          "  E2B_API_URL      control-plane URL, default https://api.<domain>\n"
          "  E2B_SANDBOX_URL  one envd URL for every sandbox; default https://sandbox.<domain> for E2B's\n"
          "                   own domains, else https://49983-<id>.<domain>\n"
          "  PRISM_E2B_CA_FILE  extra CA bundle (PEM) to trust; peers are always verified\n"
          "\nexit codes:\n"
          "  0   success (exec: the command's own exit code, 128+N when signal N ended it)\n"
          "  64  usage error\n"
          "  66  sandbox or process not found\n"
          "  69  E2B or the network refused or failed (auth, rate limit, busy, server error, TLS)\n"
          "  70  unknown outcome (the stream was cut before the command's end)\n"
          "  78  configuration error (no API key, bad URL, unreadable CA file)\n";
}

}  // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_help(std::cerr);
        return exit_usage;
    }
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        print_help(std::cout);
        return exit_ok;
    }
    for (auto const& c : registered_commands()) {
        if (c.name == args[0]) {
            std::vector<std::string> rest(args.begin() + 1, args.end());
            return c.run(rest);
        }
    }
    return fail(exit_usage, "unknown command '" + args[0] + "' (see prism-e2b --help)");
}
