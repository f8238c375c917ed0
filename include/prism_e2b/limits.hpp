// Contract limits (contract.md "Limits"): defaults and hard caps. Out-of-range
// values are an error at validation, never clamped.
#ifndef PRISM_E2B_LIMITS_HPP
#define PRISM_E2B_LIMITS_HPP

#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b {

using env_map = std::map<std::string, std::string>;

/// Per-sandbox limits. Every field has the contract's default; validate()
/// rejects anything outside [minimum, hard cap]. Factories validate before
/// contacting any vendor.
struct PRISM_E2B_API sandbox_limits {
    /// Commands per sandbox lifetime. Default 100, 1..256.
    std::uint32_t max_commands = 100;
    /// Concurrent execs per sandbox. Default 1, 1..8.
    std::uint32_t max_concurrent_execs = 1;
    /// stdout+stderr bytes per command. Default 64 MiB, 1..1 GiB.
    std::uint64_t max_output_bytes = 64ull << 20;
    /// Env names per command. Default 64, 0..256.
    std::uint32_t max_env_names = 64;
    /// Env bytes (names + values) per command. Default 64 KiB, 0..256 KiB.
    std::uint64_t max_env_bytes = 64ull << 10;
    /// Sandbox life (sent as the vendor timeout, whole seconds). Default 20 min, 1 s..30 min.
    std::chrono::milliseconds wall_time{20 * 60 * 1000};
    /// Grace between SIGTERM and SIGKILL when stopping. Default 5 s, 0..30 s.
    std::chrono::milliseconds stop_grace{5000};
    /// Bound on cleanup work (kill after a failed set-up). Default 30 s, 1 ms..120 s.
    std::chrono::milliseconds cleanup_deadline{30000};

    /// Ok, or errc::invalid_argument naming the first field out of range.
    result<void> validate() const;
};

/// Hard caps and minimums of sandbox_limits (contract.md).
struct sandbox_limit_caps {
    static constexpr std::uint32_t max_commands = 256;                     ///< most commands per sandbox
    static constexpr std::uint32_t max_concurrent_execs = 8;               ///< most execs at once
    static constexpr std::uint64_t max_output_bytes = 1ull << 30;          ///< most output per command
    static constexpr std::uint32_t max_env_names = 256;                    ///< most environment variables per command
    static constexpr std::uint64_t max_env_bytes = 256ull << 10;           ///< most environment bytes per command
    static constexpr std::chrono::milliseconds wall_time{30 * 60 * 1000};  ///< longest wall time
    static constexpr std::chrono::milliseconds min_wall_time{1000};        ///< shortest wall time
    static constexpr std::chrono::milliseconds stop_grace{30000};          ///< longest stop grace
    static constexpr std::chrono::milliseconds cleanup_deadline{120000};   ///< longest cleanup deadline
};

/// Host-side process session limits (contract.md "Process sessions").
struct PRISM_E2B_API process_session_limits {
    /// Live sessions per registry. Default 8, 1..32.
    std::uint32_t max_sessions = 8;
    /// Bytes per input write. Default 64 KiB, 1..1 MiB.
    std::uint64_t max_input_write = 64ull << 10;
    /// Session lifetime. Default 4 h, 1 ms..24 h.
    std::chrono::milliseconds max_lifetime{4 * 3600 * 1000};
    /// Bytes per output page. Default 50 KiB, 1..1 MiB.
    std::uint64_t max_output_chunk = 50ull << 10;
    /// Output retained per session. Default 64 MiB, 1..1 GiB.
    std::uint64_t max_total_output = 64ull << 20;

    result<void> validate() const;  ///< Ok, or errc::invalid_argument naming the first field out of range
};

/// Hard caps of process_session_limits.
struct process_session_limit_caps {
    static constexpr std::uint32_t max_sessions = 32;                             ///< most live sessions
    static constexpr std::uint64_t max_input_write = 1ull << 20;                  ///< largest input write
    static constexpr std::chrono::milliseconds max_lifetime{24ll * 3600 * 1000};  ///< longest lifetime
    static constexpr std::uint64_t max_output_chunk = 1ull << 20;                 ///< largest output page
    static constexpr std::uint64_t max_total_output = 1ull << 30;                 ///< most output retained
};

/// True when `name` matches [A-Za-z_][A-Za-z0-9_]*.
PRISM_E2B_API bool is_valid_env_name(std::string_view name) noexcept;

/// Checks one command's argv and env against the contract: no NUL in file,
/// args, env names or values; valid env names; env count and bytes within
/// `limits`. Errors: invalid_argument (bad input), limit_exceeded (env caps).
PRISM_E2B_API result<void> validate_command(std::string_view file, std::vector<std::string> const& args,
                                            env_map const& env, sandbox_limits const& limits);

}  // namespace prism_e2b

#endif
