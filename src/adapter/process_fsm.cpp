// process_fsm's transitions.
#include "adapter/process_fsm.hpp"

#include <utility>

namespace prism_e2b::detail {

process_exit map_end_event(e2b::end_event const& end, bool kill_requested)
{
    process_exit e;
    e.status = end.status;
    if (end.exited) {
        e.exit_code = end.exit_code;
        e.outcome = exit_outcome::exited;
    } else if (kill_requested || end.status.find("signal") != std::string::npos) {
        e.outcome = exit_outcome::killed;
    } else {
        e.outcome = exit_outcome::unknown;
    }
    if (e.status.empty() && end.error) e.status = *end.error;
    return e;
}

result<void> process_fsm::usable(char const* operation) const
{
    if (phase_ == process_phase::released)
        return error(errc::invalid_argument, "the process handle was released", {operation});
    return {};
}

process_actions process_fsm::finish(process_phase terminal_phase, process_exit e)
{
    process_actions a;
    if (terminal() || phase_ == process_phase::released) return a;
    a.stop_reader = true;
    a.notify = true;
    phase_ = terminal_phase;
    exit_ = std::move(e);
    reattaching_ = false;
    return a;
}

process_actions process_fsm::on_end_event(e2b::end_event const& end)
{
    if (phase_ != process_phase::attached) return {};
    return finish(process_phase::exited, map_end_event(end, kill_requested_));
}

process_actions process_fsm::on_stream_broken(std::string why, bool sandbox_running)
{
    process_actions a;
    if (phase_ != process_phase::attached) return a;
    if (cut_expected_ || !sandbox_running) {
        // Cut by a pause: the process lives on after a memory resume.
        phase_ = process_phase::suspended;
        a.notify = true;
        if (sandbox_running) {
            reattaching_ = true;
            a.reattach = true;
        }
        return a;
    }
    process_exit e;
    e.outcome = kill_requested_ ? exit_outcome::killed : exit_outcome::unknown;
    e.status = std::move(why);
    return finish(process_phase::unknown, std::move(e));
}

void process_fsm::on_pause_begun()
{
    if (phase_ == process_phase::attached) cut_expected_ = true;
}

process_actions process_fsm::on_sandbox_running()
{
    process_actions a;
    if (phase_ != process_phase::suspended || reattaching_) return a;
    reattaching_ = true;
    a.reattach = true;
    return a;
}

process_actions process_fsm::on_reattached(bool pause_in_flight)
{
    process_actions a;
    if (phase_ != process_phase::suspended || !reattaching_) {
        a.stop_reader = true;  // overtaken (released, gone): drop the new stream
        return a;
    }
    reattaching_ = false;
    phase_ = process_phase::attached;
    cut_expected_ = pause_in_flight;
    a.notify = true;
    return a;
}

process_actions process_fsm::on_reattach_failed(std::string why, bool sandbox_running)
{
    if (phase_ != process_phase::suspended || !reattaching_) return {};
    if (!sandbox_running) {
        reattaching_ = false;  // the next resume re-attaches
        return {};
    }
    process_exit e;
    e.outcome = exit_outcome::unknown;
    e.status = std::move(why);
    return finish(process_phase::unknown, std::move(e));
}

process_actions process_fsm::on_gone(std::string why)
{
    process_exit e;
    e.outcome = exit_outcome::unknown;
    e.status = std::move(why);
    return finish(process_phase::unknown, std::move(e));
}

process_actions process_fsm::on_release()
{
    process_actions a;
    a.stop_reader = true;
    if (phase_ == process_phase::released) return a;
    a.notify = true;
    if (!terminal()) phase_ = process_phase::released;
    reattaching_ = false;
    return a;
}

process_actions process_fsm::on_kill_grace_over()
{
    process_exit e;
    e.outcome = exit_outcome::killed;
    e.status = "signal: killed";
    auto a = finish(process_phase::unknown, std::move(e));
    a.stop_reader = true;
    return a;
}

}  // namespace prism_e2b::detail
