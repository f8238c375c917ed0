// Fault switches for tests (one mutex guards them all).
#include "emulator/fault_switches.hpp"

#include <algorithm>

namespace prism_e2b::local::detail {

void fault_switches::fail_next_pauses(unsigned count)
{
    std::lock_guard lk(mutex_);
    pause_failures_ = count;
}

void fault_switches::throttle_next_creates(unsigned count, std::chrono::seconds retry_after)
{
    std::lock_guard lk(mutex_);
    create_throttles_ = count;
    retry_after_ = retry_after;
}

void fault_switches::add_latency(std::string route_prefix, std::chrono::milliseconds delay)
{
    std::lock_guard lk(mutex_);
    if (delay.count() <= 0)
        latency_.erase(route_prefix);
    else
        latency_[std::move(route_prefix)] = delay;
}

void fault_switches::cut_next_streams(std::size_t after_bytes, unsigned count)
{
    std::lock_guard lk(mutex_);
    stream_cuts_ = count;
    cut_after_ = after_bytes;
}

void fault_switches::kill_sandbox_during_exec(std::string sandbox_id, std::chrono::milliseconds after)
{
    std::lock_guard lk(mutex_);
    kills_[std::move(sandbox_id)] = after;
}

void fault_switches::reset()
{
    std::lock_guard lk(mutex_);
    pause_failures_ = 0;
    create_throttles_ = 0;
    latency_.clear();
    stream_cuts_ = 0;
    kills_.clear();
}

bool fault_switches::take_pause_failure()
{
    std::lock_guard lk(mutex_);
    if (pause_failures_ == 0) return false;
    --pause_failures_;
    return true;
}

std::optional<std::chrono::seconds> fault_switches::take_create_throttle()
{
    std::lock_guard lk(mutex_);
    if (create_throttles_ == 0) return std::nullopt;
    --create_throttles_;
    return retry_after_;
}

std::chrono::milliseconds fault_switches::latency_for(std::string_view path) const
{
    std::lock_guard lk(mutex_);
    std::chrono::milliseconds total{0};
    for (auto const& [prefix, d] : latency_)
        if (path.substr(0, prefix.size()) == prefix) total = std::max(total, d);
    return total;
}

std::optional<std::size_t> fault_switches::take_stream_cut()
{
    std::lock_guard lk(mutex_);
    if (stream_cuts_ == 0) return std::nullopt;
    --stream_cuts_;
    return cut_after_;
}

std::optional<std::chrono::milliseconds> fault_switches::take_kill_during_exec(std::string const& sandbox_id)
{
    std::lock_guard lk(mutex_);
    auto it = kills_.find(sandbox_id);
    if (it == kills_.end()) return std::nullopt;
    auto d = it->second;
    kills_.erase(it);
    return d;
}

}  // namespace prism_e2b::local::detail
