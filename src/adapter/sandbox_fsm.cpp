// sandbox_fsm's transitions and the envd-target merge rule.
#include "adapter/sandbox_fsm.hpp"

namespace prism_e2b::detail {

e2b::envd_target merge_envd_target(e2b::envd_target const& known, e2b::envd_target reply)
{
    if (reply.sandbox_id.empty()) reply.sandbox_id = known.sandbox_id;
    if (!reply.access_token) reply.access_token = known.access_token;
    if (!reply.domain) reply.domain = known.domain;
    if (reply.envd_version.empty()) reply.envd_version = known.envd_version;
    return reply;
}

sandbox_fsm::sandbox_fsm(e2b::envd_target target, sandbox_state initial) : settled_(initial), target_(std::move(target))
{
}

sandbox_phase sandbox_fsm::phase() const noexcept
{
    if (settled_ == sandbox_state::killed) return sandbox_phase::killed;
    if (killing_) return sandbox_phase::killing;
    if (pauses_in_flight_ > 0) return sandbox_phase::pausing;
    if (resumes_in_flight_ > 0) return sandbox_phase::resuming;
    return settled_ == sandbox_state::paused ? sandbox_phase::paused : sandbox_phase::running;
}

bool sandbox_fsm::running_steadily() const noexcept
{
    return settled_ == sandbox_state::running && pauses_in_flight_ == 0;
}

result<e2b::envd_target> sandbox_fsm::activity(std::string_view operation) const
{
    if (settled_ == sandbox_state::killed)
        return error(errc::not_found, "the sandbox was killed", {std::string(operation)});
    if (settled_ == sandbox_state::paused)
        return error(errc::paused, "the sandbox is paused; call resume() first (activity never resumes it)",
                     {std::string(operation)});
    return target_;
}

template <class F>
process_effects sandbox_fsm::for_each_process(F f)
{
    process_effects out;
    for (auto& [key, p] : processes_) {
        auto a = f(p.fsm);
        if (a.stop_reader || a.reattach || a.notify) out.emplace_back(key, a);
    }
    return out;
}

process_effects sandbox_fsm::all_gone(char const* why)
{
    return for_each_process([why](process_fsm& p) { return p.on_gone(why); });
}

// ---- pause -------------------------------------------------------------------

result<void> sandbox_fsm::pause_begin()
{
    if (settled_ == sandbox_state::killed) return error(errc::not_found, "the sandbox was killed", {"pause"});
    ++pauses_in_flight_;
    for (auto& [key, p] : processes_) p.fsm.on_pause_begun();
    return {};
}

process_effects sandbox_fsm::pause_succeeded(snapshot_kind requested, bool already_paused)
{
    if (pauses_in_flight_ > 0) --pauses_in_flight_;
    if (settled_ == sandbox_state::killed) return {};
    settled_ = sandbox_state::paused;
    if (!already_paused || !paused_kind_) paused_kind_ = requested;
    if (!already_paused && requested == snapshot_kind::filesystem) {
        // Filesystem-only: the resume will be a reboot; every pid is void.
        rebooted_ = true;
        pids_since_reboot_.clear();
        return all_gone("filesystem-only pause: the process is gone");
    }
    return {};
}

process_effects sandbox_fsm::pause_refused()
{
    if (pauses_in_flight_ > 0) --pauses_in_flight_;
    if (!running_steadily()) return {};
    return for_each_process([](process_fsm& p) { return p.on_sandbox_running(); });
}

process_effects sandbox_fsm::vanished()
{
    if (settled_ == sandbox_state::killed) return {};
    settled_ = sandbox_state::killed;
    paused_kind_.reset();
    return all_gone("the sandbox no longer exists");
}

// ---- resume ------------------------------------------------------------------

result<void> sandbox_fsm::resume_begin()
{
    if (settled_ == sandbox_state::killed) return error(errc::not_found, "the sandbox was killed", {"resume"});
    ++resumes_in_flight_;
    return {};
}

process_effects sandbox_fsm::resume_succeeded(e2b::envd_target reply)
{
    if (resumes_in_flight_ > 0) --resumes_in_flight_;
    if (settled_ == sandbox_state::killed) return {};
    target_ = merge_envd_target(target_, std::move(reply));
    settled_ = sandbox_state::running;
    paused_kind_.reset();
    // Memory snapshot: processes continue; re-attach readers cut by the pause.
    // Filesystem-only: they were marked gone at pause time and never come back.
    if (!running_steadily()) return {};
    return for_each_process([](process_fsm& p) { return p.on_sandbox_running(); });
}

void sandbox_fsm::resume_failed()
{
    if (resumes_in_flight_ > 0) --resumes_in_flight_;
}

// ---- kill --------------------------------------------------------------------

kill_step sandbox_fsm::kill_begin()
{
    if (settled_ == sandbox_state::killed) return kill_step::done;
    if (killing_) return kill_step::wait;
    killing_ = true;
    return kill_step::call_vendor;
}

process_effects sandbox_fsm::kill_succeeded()
{
    killing_ = false;
    if (settled_ == sandbox_state::killed) return {};
    settled_ = sandbox_state::killed;
    paused_kind_.reset();
    return all_gone("the sandbox was killed");
}

void sandbox_fsm::kill_failed() { killing_ = false; }

// ---- status ------------------------------------------------------------------

process_effects sandbox_fsm::observed(e2b::sandbox_state vendor)
{
    if (settled_ == sandbox_state::killed) return {};
    if (vendor == e2b::sandbox_state::paused) {
        settled_ = sandbox_state::paused;
        return {};
    }
    auto const was_paused = settled_ == sandbox_state::paused;
    settled_ = sandbox_state::running;
    if (was_paused) paused_kind_.reset();
    if (!was_paused || !running_steadily()) return {};
    return for_each_process([](process_fsm& p) { return p.on_sandbox_running(); });
}

// ---- processes -----------------------------------------------------------------

process_key sandbox_fsm::process_added(std::uint32_t pid)
{
    // Started, or attested by attach: either way it runs since the last reboot.
    pids_since_reboot_.insert(pid);
    auto const key = next_key_++;
    processes_.emplace(key, followed{pid, process_fsm()});
    return key;
}

void sandbox_fsm::process_removed(process_key key) { processes_.erase(key); }

attach_verdict sandbox_fsm::may_attach(std::uint32_t pid) const
{
    if (settled_ == sandbox_state::killed) return attach_verdict::gone;
    if (settled_ == sandbox_state::paused)
        // After a filesystem-only pause the process is gone for good.
        return paused_kind_ == snapshot_kind::filesystem ? attach_verdict::gone : attach_verdict::paused;
    if (rebooted_ && !pids_since_reboot_.contains(pid)) return attach_verdict::gone;  // never the same process
    return attach_verdict::allowed;
}

process_fsm* sandbox_fsm::find(process_key key)
{
    auto it = processes_.find(key);
    return it == processes_.end() ? nullptr : &it->second.fsm;
}

process_actions sandbox_fsm::stream_broken(process_key key, std::string why)
{
    auto* p = find(key);
    return p ? p->on_stream_broken(std::move(why), running_steadily()) : process_actions{};
}

process_actions sandbox_fsm::end_event(process_key key, e2b::end_event const& end)
{
    auto* p = find(key);
    return p ? p->on_end_event(end) : process_actions{};
}

process_actions sandbox_fsm::reattached(process_key key)
{
    auto* p = find(key);
    return p ? p->on_reattached(!running_steadily()) : process_actions{.stop_reader = true};
}

process_actions sandbox_fsm::reattach_failed(process_key key, std::string why)
{
    auto* p = find(key);
    return p ? p->on_reattach_failed(std::move(why), running_steadily()) : process_actions{};
}

process_actions sandbox_fsm::released(process_key key)
{
    auto* p = find(key);
    return p ? p->on_release() : process_actions{.stop_reader = true};
}

void sandbox_fsm::kill_sent(process_key key)
{
    if (auto* p = find(key)) p->on_kill_sent();
}

void sandbox_fsm::kill_failed(process_key key)
{
    if (auto* p = find(key)) p->on_kill_failed();
}

process_actions sandbox_fsm::kill_grace_over(process_key key)
{
    auto* p = find(key);
    return p ? p->on_kill_grace_over() : process_actions{};
}

}  // namespace prism_e2b::detail
