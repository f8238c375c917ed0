// What the prism-e2b subcommands share: exit codes, the client runner, error
// reporting, output formats. Each command group lives in its own cmd_<group>.cpp
// and adds its subcommands to the CLI11 app through one add_* function below;
// main.cpp calls them in order.
#ifndef PRISM_E2B_CLI_COMMANDS_HPP
#define PRISM_E2B_CLI_COMMANDS_HPP

#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/error.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::cli {

/// Exit codes (sysexits.h where one fits), listed by every --help.
/// `exec` and `connect` exit with the command's own code instead when it ran.
enum exit_code : int {
    exit_ok = 0,
    exit_usage = 64,            ///< bad command line
    exit_not_found = 66,        ///< the sandbox (or process, or file) does not exist
    exit_vendor = 69,           ///< E2B refused or failed, or the network did
    exit_unknown_outcome = 70,  ///< the outcome is unknown (stream cut before the end)
    exit_io = 74,               ///< a local file could not be read or written
    exit_paused = 75,           ///< the sandbox is paused (EX_TEMPFAIL): resume it and retry
    exit_config = 78,           ///< no API key, bad URL or CA file
};

/// The exit-code table printed at the end of every --help.
std::string exit_codes_help();

/// Where the subcommand that ran leaves its exit code; main() returns it.
struct run_state {
    int exit = exit_ok;
    bool saw_double_dash = false;  ///< argv holds "--" (exec's command must follow one)
};

/// text (for people) or json (one JSON document on stdout, for scripts).
enum class output_format { text, json };

/// Adds `--json` and `-f,--format text|json` (as the official CLI) to `cmd`.
void add_format_options(CLI::App* cmd, output_format& format);
/// Prints `v` as one line of JSON on stdout.
void print_json(boost::json::value const& v);

/// Prints "prism-e2b: <what>" on stderr (redacted, one line) and returns `code`.
int fail(int code, std::string_view what);
/// The exit code for an error from the client.
int exit_code_for(error const& e) noexcept;
/// Prints the error of `cmd` and returns exit_code_for(e).
int report(std::string_view cmd, error const& e);

/// Builds the client from the E2B_* environment (as the official SDK does) and
/// runs `body` on a fresh single-threaded io_context; configuration errors exit
/// with exit_config.
int run_with_client(std::string_view cmd,
                    std::function<boost::asio::awaitable<int>(std::shared_ptr<e2b::client>)> body);

/// The running sandbox's envd target, from the control plane (the access token
/// never comes from argv). A paused sandbox is exit_paused.
struct target_or_exit {
    std::optional<e2b::envd_target> target;  ///< set when the sandbox is running
    int exit = exit_ok;                      ///< else why not, already reported
};
boost::asio::awaitable<target_or_exit> running_target(e2b::client& c, std::string cmd, std::string sandbox_id);

/// CLI11 validator of "k=v" (k non-empty); split_label() splits a validated one.
CLI::Validator const& label_validator();
std::pair<std::string, std::string> split_label(std::string const& s);

// ---- the command groups -----------------------------------------------------
void add_create_command(CLI::App& app, run_state& st);      // cmd_create.cpp: create
void add_query_commands(CLI::App& app, run_state& st);      // cmd_info.cpp: list, info
void add_lifecycle_commands(CLI::App& app, run_state& st);  // cmd_lifecycle.cpp: pause, resume, kill
void add_exec_command(CLI::App& app, run_state& st);        // cmd_exec.cpp: exec
void add_files_commands(CLI::App& app, run_state& st);      // cmd_files.cpp: files get|put|ls
void add_connect_command(CLI::App& app, run_state& st);     // cmd_connect.cpp: connect (terminal)
void add_metrics_command(CLI::App& app, run_state& st);     // cmd_metrics.cpp: metrics
void add_logs_command(CLI::App& app, run_state& st);        // cmd_logs.cpp: logs
void add_snapshot_commands(CLI::App& app, run_state& st);   // cmd_snapshot.cpp: snapshot create|list|delete
void add_fork_command(CLI::App& app, run_state& st);        // cmd_fork.cpp: fork
void add_volume_commands(CLI::App& app, run_state& st);     // cmd_volume.cpp: volume create|list|info|delete|ls|...
void add_demo_command(CLI::App& app, run_state& st);        // demo.cpp: demo
void add_bench_command(CLI::App& app, run_state& st);       // bench.cpp: bench
/// bench_pause_resume.cpp: `bench pause_resume_memory ...` (nullopt: another bench scenario).
std::optional<int> run_bench_pause_resume_memory(std::vector<std::string> const& args);

}  // namespace prism_e2b::cli

#endif
