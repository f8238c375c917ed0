// The prism-e2b command table: each subcommand lives in its own cmd_<name>.cpp
// and registers itself here, so later subcommands (demo, bench, serve) are
// added without touching main.cpp or this file.
#ifndef PRISM_E2B_CLI_COMMANDS_HPP
#define PRISM_E2B_CLI_COMMANDS_HPP

#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/error.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::cli {

/// Exit codes (sysexits.h where one fits), listed by `prism-e2b --help`.
/// `exec` exits with the command's own code instead when the command ran.
enum exit_code : int {
    exit_ok = 0,
    exit_usage = 64,            ///< bad command line
    exit_not_found = 66,        ///< the sandbox (or process) does not exist
    exit_vendor = 69,           ///< E2B refused or failed, or the network did
    exit_unknown_outcome = 70,  ///< the outcome is unknown (stream cut before the end)
    exit_config = 78,           ///< no API key, bad URL or CA file
};

struct command {
    std::string name;
    std::string usage;    ///< e.g. "pause SANDBOX [--no-memory]"
    std::string summary;  ///< one line
    /// args exclude the command name. Returns the process exit code.
    std::function<int(std::vector<std::string> const& args)> run;
};

/// Adds a command to the table; use as `static bool const r = register_command({...});`.
bool register_command(command c);
/// Every registered command, sorted by name.
std::vector<command> const& registered_commands();

/// Prints "prism-e2b: <what>" on stderr (redacted) and returns `code`.
int fail(int code, std::string_view what);
/// Usage error for `cmd`: message plus its usage line; returns exit_usage.
int usage_error(std::string_view cmd, std::string_view what);
/// The exit code for an error from the client.
int exit_code_for(error const& e) noexcept;
/// Prints the error of `cmd` and returns exit_code_for(e).
int report(std::string_view cmd, error const& e);

/// Builds the client from the E2B_* environment (as the official SDK does) and
/// runs `body` on a fresh io_context; configuration errors exit with exit_config.
int run_with_client(std::string_view cmd,
                    std::function<boost::asio::awaitable<int>(std::shared_ptr<e2b::client>)> body);

/// Parses "k=v" (k non-empty). std::nullopt when malformed.
std::optional<std::pair<std::string, std::string>> parse_label(std::string_view s);
/// Parses a non-negative integer (whole seconds etc.).
std::optional<long long> parse_count(std::string_view s);

}  // namespace prism_e2b::cli

#endif
