// Contract limits: range checks (never clamping) and per-command argv/env checks.
#include <prism_e2b/limits.hpp>

#include <optional>
#include <string>

namespace prism_e2b {
namespace {

// Accumulates the first out-of-range field; later checks are skipped.
class range_checker {
public:
    template <class T>
    void check(char const* field, T value, T min, T max)
    {
        if (error_ || (value >= min && value <= max)) return;
        error_ =
            error(errc::invalid_argument, std::string(field) + " = " + std::to_string(value) + " is out of range [" +
                                              std::to_string(min) + ", " + std::to_string(max) + "]");
    }

    void check(char const* field, std::chrono::milliseconds value, std::chrono::milliseconds min,
               std::chrono::milliseconds max)
    {
        if (error_ || (value >= min && value <= max)) return;
        error_ = error(errc::invalid_argument, std::string(field) + " = " + std::to_string(value.count()) +
                                                   " ms is out of range [" + std::to_string(min.count()) + " ms, " +
                                                   std::to_string(max.count()) + " ms]");
    }

    result<void> finish() const
    {
        if (error_) return *error_;
        return {};
    }

private:
    std::optional<error> error_;
};

bool has_nul(std::string_view s) noexcept { return s.find('\0') != std::string_view::npos; }

}  // namespace

result<void> sandbox_limits::validate() const
{
    using caps = sandbox_limit_caps;
    using std::chrono::milliseconds;
    range_checker c;
    c.check<std::uint32_t>("max_commands", max_commands, 1, caps::max_commands);
    c.check<std::uint32_t>("max_concurrent_execs", max_concurrent_execs, 1, caps::max_concurrent_execs);
    c.check<std::uint64_t>("max_output_bytes", max_output_bytes, 1, caps::max_output_bytes);
    c.check<std::uint32_t>("max_env_names", max_env_names, 0, caps::max_env_names);
    c.check<std::uint64_t>("max_env_bytes", max_env_bytes, 0, caps::max_env_bytes);
    c.check("wall_time", wall_time, caps::min_wall_time, caps::wall_time);
    c.check("stop_grace", stop_grace, milliseconds(0), caps::stop_grace);
    c.check("cleanup_deadline", cleanup_deadline, milliseconds(1), caps::cleanup_deadline);
    return c.finish();
}

result<void> process_session_limits::validate() const
{
    using caps = process_session_limit_caps;
    range_checker c;
    c.check<std::uint32_t>("max_sessions", max_sessions, 1, caps::max_sessions);
    c.check<std::uint64_t>("max_input_write", max_input_write, 1, caps::max_input_write);
    c.check("max_lifetime", max_lifetime, std::chrono::milliseconds(1), caps::max_lifetime);
    c.check<std::uint64_t>("max_output_chunk", max_output_chunk, 1, caps::max_output_chunk);
    c.check<std::uint64_t>("max_total_output", max_total_output, 1, caps::max_total_output);
    return c.finish();
}

bool is_valid_env_name(std::string_view name) noexcept
{
    auto alpha = [](char ch) { return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_'; };
    auto digit = [](char ch) { return ch >= '0' && ch <= '9'; };
    if (name.empty() || !alpha(name.front())) return false;
    for (char ch : name.substr(1))
        if (!alpha(ch) && !digit(ch)) return false;
    return true;
}

result<void> validate_command(std::string_view file, std::vector<std::string> const& args, env_map const& env,
                              sandbox_limits const& limits)
{
    // Messages name positions, never contents: args and env values may carry secrets.
    if (file.empty()) return error(errc::invalid_argument, "command file is empty");
    if (has_nul(file)) return error(errc::invalid_argument, "command file contains a NUL byte");
    for (std::size_t i = 0; i < args.size(); ++i)
        if (has_nul(args[i]))
            return error(errc::invalid_argument, "argument " + std::to_string(i) + " contains a NUL byte");
    std::uint64_t env_bytes = 0;
    std::size_t position = 0;
    for (auto const& [name, value] : env) {
        // An invalid name is not echoed: a caller passing "KEY=value" as a name would leak the value.
        if (has_nul(name))
            return error(errc::invalid_argument, "env name #" + std::to_string(position) + " contains a NUL byte");
        if (!is_valid_env_name(name))
            return error(errc::invalid_argument,
                         "env name #" + std::to_string(position) + " does not match [A-Za-z_][A-Za-z0-9_]*");
        if (has_nul(value)) return error(errc::invalid_argument, "the value of env " + name + " contains a NUL byte");
        env_bytes += name.size() + value.size();
        ++position;
    }
    if (env.size() > limits.max_env_names)
        return error(errc::limit_exceeded, std::to_string(env.size()) + " env names exceed max_env_names = " +
                                               std::to_string(limits.max_env_names));
    if (env_bytes > limits.max_env_bytes)
        return error(errc::limit_exceeded, std::to_string(env_bytes) + " env bytes exceed max_env_bytes = " +
                                               std::to_string(limits.max_env_bytes));
    return {};
}

}  // namespace prism_e2b
