// The lifecycle of one followed remote process as a plain value: events in,
// actions out, no I/O. The reader and the handle perform what the actions ask.
#ifndef PRISM_E2B_ADAPTER_PROCESS_FSM_HPP
#define PRISM_E2B_ADAPTER_PROCESS_FSM_HPP

#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/process.hpp>

#include <optional>
#include <string>

namespace prism_e2b::detail {

/// Maps an `end` event to the contract's exit: exited -> exit code; otherwise no
/// exit code (killed when a signal ended it or we asked for SIGKILL, else unknown).
process_exit map_end_event(e2b::end_event const& end, bool kill_requested);

/// attached  -> a reader follows the process's event stream
/// suspended -> its stream was cut by a pause; re-attach when the sandbox runs
/// released  -> the handle let go; the process keeps running, unfollowed
/// exited    -> its end event arrived (terminal)
/// unknown   -> it ended without an end event we saw: gone, cut, forced (terminal)
enum class process_phase { attached, suspended, released, exited, unknown };

/// What the caller must do after an event. Several may be set.
struct process_actions {
    bool stop_reader = false;  ///< cancel the current reader (or re-attach)
    bool reattach = false;     ///< connect to the process again and start a reader
    bool notify = false;       ///< the phase changed: wake whoever waits on it
};

/// Thread safety: none; the owner (sandbox_fsm) serialises every call.
class process_fsm {
public:
    process_phase phase() const noexcept { return phase_; }
    bool terminal() const noexcept { return phase_ == process_phase::exited || phase_ == process_phase::unknown; }
    /// The recorded end, once terminal.
    std::optional<process_exit> const& exit() const noexcept { return exit_; }
    bool kill_requested() const noexcept { return kill_requested_; }
    bool reattaching() const noexcept { return reattaching_; }
    /// Whether a pause began while the current stream was open, so a break of
    /// that stream is not the process's outcome.
    bool cut_expected() const noexcept { return cut_expected_; }

    /// Output is delivered only while attached (never after the end or a release).
    bool accepts_data() const noexcept { return phase_ == process_phase::attached; }
    /// errc::invalid_argument after release; ok otherwise (terminal included:
    /// the caller learns the outcome from the vendor or from exit()).
    result<void> usable(char const* operation) const;

    process_actions on_end_event(e2b::end_event const& end);
    /// The stream broke or ended without an end event. `sandbox_running`: the
    /// sandbox runs and no pause is in flight, so a cut-by-pause re-attaches now.
    process_actions on_stream_broken(std::string why, bool sandbox_running);
    /// A pause begins: the current stream may be cut.
    void on_pause_begun();
    /// The sandbox runs again (resumed, or a pause was refused or failed).
    process_actions on_sandbox_running();
    /// A re-attach connected: a new stream follows the process. `pause_in_flight`:
    /// a pause began (or holds) while it connected.
    process_actions on_reattached(bool pause_in_flight);
    /// A re-attach could not connect. While the sandbox does not run steadily
    /// (paused again) it waits for the next resume; otherwise the end is unknown.
    process_actions on_reattach_failed(std::string why, bool sandbox_running);
    /// The sandbox was killed or rebooted: the process is gone.
    process_actions on_gone(std::string why);
    /// release() or the handle's destruction.
    process_actions on_release();
    /// SIGKILL is being sent / could not be sent.
    void on_kill_sent() noexcept { kill_requested_ = true; }
    void on_kill_failed() noexcept { kill_requested_ = false; }
    /// The kill's grace passed without an end event: record "killed" ourselves.
    process_actions on_kill_grace_over();

private:
    process_actions finish(process_phase terminal_phase, process_exit e);

    process_phase phase_ = process_phase::attached;
    std::optional<process_exit> exit_;
    bool kill_requested_ = false;
    bool reattaching_ = false;
    bool cut_expected_ = false;
};

}  // namespace prism_e2b::detail

#endif
