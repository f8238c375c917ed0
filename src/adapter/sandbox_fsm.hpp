// The lifecycle of one sandbox and of the processes it follows, as a plain
// value: events in, actions out, no I/O. The coroutines of e2b_sandbox perform
// the vendor calls the actions ask for and report the replies back as events.
#ifndef PRISM_E2B_ADAPTER_SANDBOX_FSM_HPP
#define PRISM_E2B_ADAPTER_SANDBOX_FSM_HPP

#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/sandbox.hpp>

#include "adapter/process_fsm.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prism_e2b::detail {

/// The one envd-target merge rule of every path that learns a new target
/// (resume, connect with resume): the reply's fields win, but a field the
/// reply lacks (access token, domain, envd version) keeps its known value,
/// so version-gated calls (close_stdin, write_file) keep working.
e2b::envd_target merge_envd_target(e2b::envd_target const& known, e2b::envd_target reply);

/// running / paused / killed are settled; pausing, resuming and killing mean a
/// vendor call is in flight (pause and resume may overlap; kill wins).
enum class sandbox_phase { running, pausing, paused, resuming, killing, killed };

/// A followed process's key in the fsm (pids repeat across attaches).
using process_key = std::uint64_t;

/// Actions for the processes after a sandbox event.
using process_effects = std::vector<std::pair<process_key, process_actions>>;

/// What kill() must do next.
enum class kill_step {
    done,         ///< already killed: success without a vendor call
    call_vendor,  ///< this caller kills; report kill_succeeded / kill_failed
    wait,         ///< another kill is in flight: wait for the phase to change, then ask again
};

/// What attach_process may do with a pid.
enum class attach_verdict { allowed, gone, paused };

/// Thread safety: none (a value type); e2b_sandbox_core serialises every call.
class sandbox_fsm {
public:
    sandbox_fsm() = default;
    /// A created sandbox (running), or a connected one in its reported state.
    sandbox_fsm(e2b::envd_target target, sandbox_state initial);

    sandbox_phase phase() const noexcept;
    /// The contract's state: in-flight pause/resume/kill report the settled state.
    sandbox_state state() const noexcept { return settled_; }
    /// Known only when this object paused it.
    std::optional<snapshot_kind> paused_kind() const noexcept { return paused_kind_; }
    e2b::envd_target const& target() const noexcept { return target_; }
    bool rebooted() const noexcept { return rebooted_; }

    /// For activity (exec, process I/O): the envd target, or errc::paused /
    /// errc::not_found (killed) without any vendor call.
    result<e2b::envd_target> activity(std::string_view operation) const;

    // -- pause --------------------------------------------------------------
    /// errc::not_found when killed (no vendor call); else call pause. Every
    /// followed stream may now be cut by it.
    result<void> pause_begin();
    /// The vendor paused it (or it already was). A filesystem-only pause that
    /// happened now is a reboot: every followed process is gone.
    process_effects pause_succeeded(snapshot_kind requested, bool already_paused);
    /// 503: nothing changed, or the call failed: the sandbox still runs.
    process_effects pause_refused();
    /// 404 from pause, resume or status: the sandbox no longer exists.
    process_effects vanished();

    // -- resume -------------------------------------------------------------
    result<void> resume_begin();
    /// The vendor's connect returned `reply`: merged into the target.
    process_effects resume_succeeded(e2b::envd_target reply);
    void resume_failed();

    // -- kill ---------------------------------------------------------------
    kill_step kill_begin();
    process_effects kill_succeeded();
    void kill_failed();

    // -- status -------------------------------------------------------------
    /// The vendor reports the sandbox running or paused (someone else may have
    /// changed it). Ignored once killed.
    process_effects observed(e2b::sandbox_state vendor);

    // -- processes ------------------------------------------------------------
    /// A process this object started or re-attached (attested); returns its key.
    process_key process_added(std::uint32_t pid);
    void process_removed(process_key key);
    /// Whether attach_process may follow `pid`.
    attach_verdict may_attach(std::uint32_t pid) const;
    /// Precondition: `key` was added and not removed.
    process_fsm const& process(process_key key) const { return processes_.at(key).fsm; }
    /// Whether the sandbox runs with no pause in flight (a stream break now is
    /// not a pause's doing unless the process expected it).
    bool running_steadily() const noexcept;

    process_actions stream_broken(process_key key, std::string why);
    process_actions end_event(process_key key, e2b::end_event const& end);
    process_actions reattached(process_key key);
    process_actions reattach_failed(process_key key, std::string why);
    process_actions released(process_key key);
    void kill_sent(process_key key);
    void kill_failed(process_key key);
    process_actions kill_grace_over(process_key key);

private:
    struct followed {
        std::uint32_t pid = 0;
        process_fsm fsm;
    };
    process_fsm* find(process_key key);
    template <class F>
    process_effects for_each_process(F f);
    process_effects all_gone(char const* why);

    sandbox_state settled_ = sandbox_state::running;
    std::optional<snapshot_kind> paused_kind_;
    e2b::envd_target target_;
    unsigned pauses_in_flight_ = 0;
    unsigned resumes_in_flight_ = 0;
    bool killing_ = false;
    bool rebooted_ = false;                      ///< a filesystem-only pause happened under this object
    std::set<std::uint32_t> pids_since_reboot_;  ///< pids this object started since then
    process_key next_key_ = 1;
    std::map<process_key, followed> processes_;
};

}  // namespace prism_e2b::detail

#endif
