// The shared state of one e2b_sandbox: configuration, the lifecycle state
// machine, the governor and the I/O objects of the processes it follows.
// Private to the adapter.
#ifndef PRISM_E2B_ADAPTER_SANDBOX_CORE_HPP
#define PRISM_E2B_ADAPTER_SANDBOX_CORE_HPP

#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/exec_governor.hpp>
#include <prism_e2b/log.hpp>
#include <prism_e2b/redactor.hpp>
#include <prism_e2b/sandbox.hpp>

#include "adapter/sandbox_fsm.hpp"
#include "adapter/state_waiters.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
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

/// Thread safety: `fsm` and the fields under "guarded by mu" are only touched
/// with `mu` held, and `mu` is never held across a suspension or while an
/// action is performed. Readers, their cancellation and every waiter live on
/// `strand` (one per sandbox). Everything else is set before the core is
/// shared and is immutable afterwards.
struct e2b_sandbox_core : std::enable_shared_from_this<e2b_sandbox_core> {
    e2b_sandbox_core(boost::asio::any_io_executor ex, std::shared_ptr<e2b::client> c, sandbox_limits lim)
        : executor(std::move(ex)),
          strand(boost::asio::make_strand(executor)),
          changes(strand),
          client(std::move(c)),
          limits(lim),
          governor(lim)
    {
    }
    /// Forgotten by the host: the sandbox's token stops being a live secret
    /// (another handle's next envd call registers it again).
    ~e2b_sandbox_core()
    {
        if (!id.empty()) secret_redactor::global().release(id);
    }

    boost::asio::any_io_executor executor;
    boost::asio::strand<boost::asio::any_io_executor> strand;
    state_waiters changes;  ///< notified after every state change that someone may wait for
    std::shared_ptr<e2b::client> client;
    std::string id;
    std::string template_name;
    std::string workdir;
    std::vector<std::string> file_roots;  ///< normalised; the files() capability's roots besides workdir
    label_map labels;
    sandbox_capabilities caps;
    sandbox_limits limits;
    std::chrono::seconds vendor_timeout{0};
    log_sink logger;
    exec_governor governor;

    mutable std::mutex mu;
    // -- guarded by mu --
    sandbox_fsm fsm;
    std::chrono::system_clock::time_point started_at{};
    std::chrono::system_clock::time_point last_activity{};
    std::map<process_key, std::weak_ptr<e2b_process_state>> followed;

    /// For activity (exec, process I/O): the envd target, or errc::paused /
    /// errc::not_found (killed) without any vendor call. Touches last_activity.
    result<e2b::envd_target> activity_target(std::string_view operation);
    /// Runs `event` on the fsm under `mu`, wakes the waiters and returns what
    /// the event returned (actions for the caller to perform).
    template <class Event>
    auto transition(Event event)
    {
        std::unique_lock lk(mu);
        if constexpr (std::is_void_v<decltype(event(fsm))>) {
            event(fsm);
            lk.unlock();
            changes.notify_all();
        } else {
            auto out = event(fsm);
            lk.unlock();
            changes.notify_all();
            return out;
        }
    }
    /// Performs what a sandbox event asks of its processes.
    void perform(process_effects const& effects);
    /// Follows a process: adds it to the fsm and returns its key.
    process_key follow(std::uint32_t pid, std::shared_ptr<e2b_process_state> const& p);
    void log(log_level level, std::string_view line) const { log_redacted(logger, level, line); }
};

}  // namespace prism_e2b::detail

#endif
