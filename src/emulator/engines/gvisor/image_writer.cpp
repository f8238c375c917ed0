// The second tier of a gvisor memory pause (image_writer.hpp).
#include "emulator/engines/gvisor/image_writer.hpp"

#include <algorithm>

namespace prism_e2b::local::detail {

namespace {

using steady = std::chrono::steady_clock;

// How often the RAM the frozen sandboxes hold is looked at while some are frozen.
constexpr auto pressure_check_interval = std::chrono::seconds(1);

}  // namespace

image_writer::image_writer(memory_tier_policy policy, write_fn write, bytes_fn held_bytes)
    : policy_(std::move(policy)), write_(std::move(write)), held_bytes_(std::move(held_bytes))
{
}

image_writer::~image_writer() { stop(); }

void image_writer::schedule(std::string const& id, std::optional<std::chrono::seconds> retry_after)
{
    std::lock_guard lk(mutex_);
    if (stopping_) return;
    auto const now = steady::now();
    auto const after = retry_after ? retry_after : policy_.image_after;
    frozen_sandbox f{id, now, after ? now + *after : steady::time_point::max()};
    auto it = std::find_if(queue_.begin(), queue_.end(), [&](auto const& q) { return q.id == id; });
    if (it != queue_.end()) {
        f.since = it->since;  // frozen since then all along
        *it = std::move(f);
    } else {
        queue_.push_back(std::move(f));
    }
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    wake_.notify_all();
}

void image_writer::cancel(std::string const& id)
{
    std::lock_guard lk(mutex_);
    std::erase_if(queue_, [&](auto const& q) { return q.id == id; });
}

void image_writer::stop()
{
    {
        std::lock_guard lk(mutex_);
        stopping_ = true;
        queue_.clear();
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

memory_tier_counts image_writer::stats() const
{
    std::vector<std::string> ids;
    memory_tier_counts s;
    {
        std::lock_guard lk(mutex_);
        s = stats_;
        for (auto const& q : queue_) ids.push_back(q.id);
    }
    s.frozen = ids.size();
    for (auto const& id : ids) s.frozen_bytes += held_bytes_(id);
    return s;
}

std::optional<std::pair<std::string, bool>> image_writer::next(std::unique_lock<std::mutex>& lk)
{
    auto const take = [&](std::vector<frozen_sandbox>::iterator it, bool pressed) {
        std::pair<std::string, bool> out{std::move(it->id), pressed};
        queue_.erase(it);
        return out;
    };
    auto const now = steady::now();
    auto due =
        std::min_element(queue_.begin(), queue_.end(), [](auto const& a, auto const& b) { return a.due < b.due; });
    if (due != queue_.end() && due->due <= now) return take(due, false);
    if (queue_.empty()) return std::nullopt;
    // Under the cap? The cgroups are read without the lock: schedule() and cancel() go on meanwhile.
    std::vector<std::string> ids;
    for (auto const& q : queue_) ids.push_back(q.id);
    lk.unlock();
    std::uint64_t held = 0;
    for (auto const& id : ids) held += held_bytes_(id);
    lk.lock();
    if (stopping_ || held <= (policy_.frozen_memory_cap_mb << 20)) return std::nullopt;
    auto oldest =
        std::min_element(queue_.begin(), queue_.end(), [](auto const& a, auto const& b) { return a.since < b.since; });
    if (oldest == queue_.end()) return std::nullopt;
    return take(oldest, true);
}

void image_writer::run()
{
    std::unique_lock lk(mutex_);
    while (!stopping_) {
        if (auto job = next(lk)) {
            lk.unlock();
            auto const t0 = steady::now();
            auto const done = write_(job->first);
            auto const took = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0);
            lk.lock();
            if (done == outcome::written) {
                ++stats_.written;
                stats_.written_under_cap += job->second ? 1 : 0;
                stats_.last_write = took;
            } else if (done == outcome::failed) {
                ++stats_.failed;
            }
            continue;
        }
        if (stopping_) break;
        auto wake_at = steady::now() + pressure_check_interval;
        for (auto const& q : queue_) wake_at = std::min(wake_at, q.due);
        if (queue_.empty())
            wake_.wait(lk);
        else
            wake_.wait_until(lk, wake_at);
    }
}

}  // namespace prism_e2b::local::detail
