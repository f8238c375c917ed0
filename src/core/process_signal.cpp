// Signal names accepted by the contract's process_handle::signal(name).
#include <prism_e2b/process.hpp>

#include <cctype>

namespace prism_e2b {
namespace {

bool iequals(std::string_view a, std::string_view b) noexcept
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

}  // namespace

std::optional<process_signal> parse_process_signal(std::string_view name) noexcept
{
    // Accept the POSIX name with or without "SIG", in any case.
    if (name.size() > 3 && iequals(name.substr(0, 3), "SIG")) name.remove_prefix(3);
    if (iequals(name, "TERM")) return process_signal::sigterm;
    if (iequals(name, "KILL")) return process_signal::sigkill;
    return std::nullopt;
}

}  // namespace prism_e2b
