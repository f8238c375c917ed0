// Command table, error reporting and the client runner shared by subcommands.
#include "cli/commands.hpp"

#include <prism_e2b/redactor.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace asio = boost::asio;

namespace prism_e2b::cli {
namespace {

std::vector<command>& table()
{
    static std::vector<command> t;
    return t;
}

}  // namespace

bool register_command(command c)
{
    auto& t = table();
    t.push_back(std::move(c));
    std::sort(t.begin(), t.end(), [](command const& a, command const& b) { return a.name < b.name; });
    return true;
}

std::vector<command> const& registered_commands() { return table(); }

int fail(int code, std::string_view what)
{
    std::string line = "prism-e2b: " + secret_redactor::global().redact(what);
    std::replace(line.begin(), line.end(), '\n', ' ');  // one line, always
    std::cerr << line << std::endl;
    return code;
}

int usage_error(std::string_view cmd, std::string_view what)
{
    std::string usage;
    for (auto const& c : registered_commands())
        if (c.name == cmd) usage = c.usage;
    return fail(exit_usage, std::string(cmd) + ": " + std::string(what) +
                                (usage.empty() ? std::string() : " (usage: prism-e2b " + usage + ")"));
}

int exit_code_for(error const& e) noexcept
{
    if (e == errc::not_found) return exit_not_found;
    if (e == errc::unknown_outcome) return exit_unknown_outcome;
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

std::optional<std::pair<std::string, std::string>> parse_label(std::string_view s)
{
    auto eq = s.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    return std::make_pair(std::string(s.substr(0, eq)), std::string(s.substr(eq + 1)));
}

std::optional<long long> parse_count(std::string_view s)
{
    if (s.empty() || s.size() > 12 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::stoll(std::string(s));
}

}  // namespace prism_e2b::cli
