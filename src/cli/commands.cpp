// Error reporting, output formats and the client runner shared by subcommands.
#include "cli/commands.hpp"

#include <prism_e2b/redactor.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>

namespace asio = boost::asio;

namespace prism_e2b::cli {

std::string exit_codes_help()
{
    return "exit codes:\n"
           "  0   success (exec, connect: the command's own exit code; 128+N when signal N ended it)\n"
           "  64  usage error (bad command line)\n"
           "  66  sandbox, process or file not found\n"
           "  69  E2B or the network refused or failed (auth, rate limit, busy, server error, TLS)\n"
           "  70  unknown outcome (the stream was cut before the command's end)\n"
           "  74  a local file could not be read or written\n"
           "  75  the sandbox is paused: run `prism-e2b resume SANDBOX` and retry\n"
           "  78  configuration error (no API key, bad URL, unreadable CA file)\n";
}

void add_format_options(CLI::App* cmd, output_format& format)
{
    cmd->add_flag_callback(
        "--json", [&format] { format = output_format::json; }, "print the result as JSON (same as -f json)");
    cmd->add_option_function<std::string>(
           "-f,--format",
           [&format](std::string const& f) { format = f == "json" ? output_format::json : output_format::text; },
           "output format: text (default) or json")
        ->check(CLI::IsMember({"text", "json"}));
}

void print_json(boost::json::value const& v) { std::cout << boost::json::serialize(v) << std::endl; }

int fail(int code, std::string_view what)
{
    std::string line = "prism-e2b: " + secret_redactor::global().redact(what);
    std::replace(line.begin(), line.end(), '\n', ' ');  // one line, always
    std::cerr << line << std::endl;
    return code;
}

int exit_code_for(error const& e) noexcept
{
    if (e == errc::not_found) return exit_not_found;
    if (e == errc::unknown_outcome) return exit_unknown_outcome;
    if (e == errc::paused) return exit_paused;
    if (e == errc::invalid_argument && e.http_status() == 0) return exit_usage;  // refused before any request
    return exit_vendor;
}

int report(std::string_view cmd, error const& e)
{
    return fail(exit_code_for(e), std::string(cmd) + ": " + e.to_string());
}

int run_with_client(std::string_view cmd, std::function<asio::awaitable<int>(std::shared_ptr<e2b::client>)> body)
{
    asio::io_context ioc(1);
    e2b::client_options opts;  // everything from the environment, like the official SDK
    if (char const* ca = std::getenv("PRISM_E2B_CA_FILE"); ca && *ca) opts.ca_file = ca;
    auto c = e2b::make_client(ioc.get_executor(), opts);
    if (!c) return fail(exit_config, std::string(cmd) + ": " + c.error().to_string());
    auto fut = asio::co_spawn(ioc, body(*c), asio::use_future);
    ioc.run();
    try {
        return fut.get();
    } catch (std::exception const& ex) {
        return fail(exit_vendor, std::string(cmd) + ": " + ex.what());
    }
}

asio::awaitable<target_or_exit> running_target(e2b::client& c, std::string cmd, std::string sandbox_id)
{
    auto info = co_await c.async_get_sandbox_info(sandbox_id);
    if (!info) co_return target_or_exit{std::nullopt, report(cmd, info.error())};
    if (info->state == e2b::sandbox_state::paused)
        co_return target_or_exit{
            std::nullopt, fail(exit_paused, cmd + ": sandbox " + sandbox_id + " is paused (run: prism-e2b resume " +
                                                sandbox_id + ")")};
    co_return target_or_exit{e2b::envd_target::from(*info), exit_ok};
}

CLI::Validator const& label_validator()
{
    static CLI::Validator const v(
        [](std::string& s) -> std::string {
            auto eq = s.find('=');
            return eq == std::string::npos || eq == 0 ? "expected k=v, got '" + s + "'" : std::string();
        },
        "K=V");
    return v;
}

std::pair<std::string, std::string> split_label(std::string const& s)
{
    auto eq = s.find('=');
    return {s.substr(0, eq), s.substr(eq + 1)};
}

}  // namespace prism_e2b::cli
