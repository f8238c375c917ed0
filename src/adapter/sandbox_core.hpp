// The shared state of one e2b_sandbox: configuration, lifecycle state, the
// governor and the registry of live process readers. Private to the adapter.
#ifndef PRISM_E2B_ADAPTER_SANDBOX_CORE_HPP
#define PRISM_E2B_ADAPTER_SANDBOX_CORE_HPP

#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/exec_governor.hpp>
#include <prism_e2b/log.hpp>
#include <prism_e2b/redactor.hpp>
#include <prism_e2b/sandbox.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::detail {

struct e2b_process_state;

/// A selector by pid. A function, not a braced temporary: g++ 12 destroys a
/// braced-init temporary passed to a coroutine inside co_await twice.
inline e2b::process_selector pid_selector(std::uint32_t pid)
{
    e2b::process_selector s;
    s.pid = pid;
    return s;
}

/// Thread safety: the fields under "guarded by mu" are only touched with `mu`
/// held, and `mu` is never held across a suspension. Everything else is set
/// before the core is shared and is immutable afterwards.
struct e2b_sandbox_core : std::enable_shared_from_this<e2b_sandbox_core> {
    e2b_sandbox_core(boost::asio::any_io_executor ex, std::shared_ptr<e2b::client> c, sandbox_limits lim)
        : executor(std::move(ex)), client(std::move(c)), limits(lim), governor(lim)
    {
    }
    /// Forgotten by the host: the sandbox's token stops being a live secret
    /// (another handle's next envd call registers it again).
    ~e2b_sandbox_core()
    {
        if (!id.empty()) secret_redactor::global().release(id);
    }

    boost::asio::any_io_executor executor;
    std::shared_ptr<e2b::client> client;
    std::string id;
    std::string template_name;
    std::string workdir;
    label_map labels;
    sandbox_capabilities caps;
    sandbox_limits limits;
    std::chrono::seconds vendor_timeout{0};
    log_sink logger;
    exec_governor governor;

    mutable std::mutex mu;
    // -- guarded by mu --
    sandbox_state state = sandbox_state::running;
    std::optional<snapshot_kind> paused_kind;  ///< known only when this object paused it
    e2b::envd_target target;
    bool rebooted = false;                      ///< a filesystem-only pause happened under this object
    std::set<std::uint32_t> pids_since_reboot;  ///< pids this object started since the last reboot
    std::uint64_t pause_epoch = 0;              ///< bumped before every pause call
    bool kill_started = false;
    std::chrono::system_clock::time_point started_at{};
    std::chrono::system_clock::time_point last_activity{};
    std::vector<std::weak_ptr<e2b_process_state>> live;

    /// For activity (exec, process I/O): the envd target, or errc::paused /
    /// errc::not_found (killed) without any vendor call. Touches last_activity.
    result<e2b::envd_target> activity_target(std::string_view operation);
    std::uint64_t current_pause_epoch() const;
    sandbox_state current_state() const;
    void register_process(std::shared_ptr<e2b_process_state> const& p);
    std::vector<std::shared_ptr<e2b_process_state>> live_processes();
    void log(log_level level, std::string_view line) const { log_redacted(logger, level, line); }
};

}  // namespace prism_e2b::detail

#endif
