// Fault switches for tests (one mutex guards them all).
#include <prism_e2b/local_server.hpp>

#include <map>
#include <mutex>

namespace prism_e2b::local {

struct fault_injector::impl {
    mutable std::mutex mutex;
    unsigned pause_failures = 0;
    unsigned create_throttles = 0;
    std::chrono::seconds retry_after{1};
    std::map<std::string, std::chrono::milliseconds> latency;
    unsigned stream_cuts = 0;
    std::size_t cut_after = 0;
    std::map<std::string, std::chrono::milliseconds> kills;
};

fault_injector::fault_injector() : impl_(std::make_unique<impl>()) {}
fault_injector::~fault_injector() = default;

void fault_injector::fail_next_pauses(unsigned count)
{
    std::lock_guard lk(impl_->mutex);
    impl_->pause_failures = count;
}

void fault_injector::throttle_next_creates(unsigned count, std::chrono::seconds retry_after)
{
    std::lock_guard lk(impl_->mutex);
    impl_->create_throttles = count;
    impl_->retry_after = retry_after;
}

void fault_injector::add_latency(std::string route_prefix, std::chrono::milliseconds delay)
{
    std::lock_guard lk(impl_->mutex);
    if (delay.count() <= 0)
        impl_->latency.erase(route_prefix);
    else
        impl_->latency[std::move(route_prefix)] = delay;
}

void fault_injector::cut_next_streams(std::size_t after_bytes, unsigned count)
{
    std::lock_guard lk(impl_->mutex);
    impl_->stream_cuts = count;
    impl_->cut_after = after_bytes;
}

void fault_injector::kill_sandbox_during_exec(std::string sandbox_id, std::chrono::milliseconds after)
{
    std::lock_guard lk(impl_->mutex);
    impl_->kills[std::move(sandbox_id)] = after;
}

void fault_injector::reset()
{
    std::lock_guard lk(impl_->mutex);
    impl_->pause_failures = 0;
    impl_->create_throttles = 0;
    impl_->latency.clear();
    impl_->stream_cuts = 0;
    impl_->kills.clear();
}

bool fault_injector::take_pause_failure()
{
    std::lock_guard lk(impl_->mutex);
    if (impl_->pause_failures == 0) return false;
    --impl_->pause_failures;
    return true;
}

std::optional<std::chrono::seconds> fault_injector::take_create_throttle()
{
    std::lock_guard lk(impl_->mutex);
    if (impl_->create_throttles == 0) return std::nullopt;
    --impl_->create_throttles;
    return impl_->retry_after;
}

std::chrono::milliseconds fault_injector::latency_for(std::string_view path) const
{
    std::lock_guard lk(impl_->mutex);
    std::chrono::milliseconds total{0};
    for (auto const& [prefix, d] : impl_->latency)
        if (path.substr(0, prefix.size()) == prefix) total = std::max(total, d);
    return total;
}

std::optional<std::size_t> fault_injector::take_stream_cut()
{
    std::lock_guard lk(impl_->mutex);
    if (impl_->stream_cuts == 0) return std::nullopt;
    --impl_->stream_cuts;
    return impl_->cut_after;
}

std::optional<std::chrono::milliseconds> fault_injector::take_kill_during_exec(std::string const& sandbox_id)
{
    std::lock_guard lk(impl_->mutex);
    auto it = impl_->kills.find(sandbox_id);
    if (it == impl_->kills.end()) return std::nullopt;
    auto d = it->second;
    impl_->kills.erase(it);
    return d;
}

bool fault_injector::kill_armed(std::string const& sandbox_id) const
{
    std::lock_guard lk(impl_->mutex);
    return impl_->kills.count(sandbox_id) != 0;
}

}  // namespace prism_e2b::local
