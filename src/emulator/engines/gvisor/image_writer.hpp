// The gvisor engine's tiers of a memory pause (memory_tier_policy): a paused sandbox
// is frozen with its memory in RAM, and this writer puts its memory image on disk
// behind the pause's answer when its time comes (image_after), or sooner, the
// longest-frozen first, while the frozen sandboxes hold more RAM than the cap.
// One thread, started by the first pause: images are written one at a time (each
// one a `runsc checkpoint`, CPU- and disk-bound).
#ifndef PRISM_E2B_EMULATOR_ENGINES_GVISOR_IMAGE_WRITER_HPP
#define PRISM_E2B_EMULATOR_ENGINES_GVISOR_IMAGE_WRITER_HPP

#include <prism_e2b/local_server.hpp>

#include "emulator/engines/isolation_engine.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace prism_e2b::local::detail {

/// Thread safety: every member from any thread.
class image_writer {
public:
    /// skipped: the sandbox was no longer frozen in RAM when its turn came.
    enum class outcome { written, skipped, failed };
    /// How one sandbox's image is written (called on the writer's thread, one at a time).
    /// `held_bytes`: the RAM a frozen sandbox holds now.
    using write_fn = std::function<outcome(std::string const& id)>;
    using bytes_fn = std::function<std::uint64_t(std::string const& id)>;

    image_writer(memory_tier_policy policy, write_fn write, bytes_fn held_bytes);
    ~image_writer();
    image_writer(image_writer const&) = delete;
    image_writer& operator=(image_writer const&) = delete;

    /// Sandbox `id` is frozen now: its image is due per the policy (again after `retry_after`,
    /// when set: a write that did not happen).
    void schedule(std::string const& id, std::optional<std::chrono::seconds> retry_after = std::nullopt);
    /// It is no longer frozen (resumed, written by someone else, killed).
    void cancel(std::string const& id);
    /// Waits for a write in progress and ends the thread; nothing is written after it.
    void stop();
    /// What the writer has done, and what is frozen now (GET /admin/memory-tiers).
    memory_tier_counts stats() const;
    memory_tier_policy const& policy() const noexcept { return policy_; }

private:
    struct frozen_sandbox {
        std::string id;
        std::chrono::steady_clock::time_point since;
        std::chrono::steady_clock::time_point due;  ///< time_point::max(): only under pressure
    };
    void run();
    /// The next sandbox to write now (its queue entry removed), or none; may unlock `lk` meanwhile.
    std::optional<std::pair<std::string, bool>> next(std::unique_lock<std::mutex>& lk);

    memory_tier_policy const policy_;
    write_fn write_;
    bytes_fn held_bytes_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<frozen_sandbox> queue_;
    bool stopping_ = false;
    memory_tier_counts stats_;
    std::thread thread_;
};

}  // namespace prism_e2b::local::detail

#endif
