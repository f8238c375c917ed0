// Per-sandbox admission control: max_commands accounting, an async FIFO
// semaphore for max_concurrent_execs, and a per-command output budget.
#ifndef PRISM_E2B_EXEC_GOVERNOR_HPP
#define PRISM_E2B_EXEC_GOVERNOR_HPP

#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/limits.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <memory>

namespace prism_e2b {

/// Counts one command's stdout+stderr bytes against max_output_bytes.
/// Thread safety: consume() may be called concurrently.
class PRISM_E2B_API output_budget {
public:
    explicit output_budget(std::uint64_t max_bytes) noexcept : max_(max_bytes) {}  ///< a budget of `max_bytes`

    /// Adds `n` bytes. Returns false once the total exceeds the budget (and
    /// from then on): the caller must stop the process and fail the command.
    bool consume(std::uint64_t n) noexcept;
    bool overflowed() const noexcept
    {
        return overflowed_.load(std::memory_order_acquire);
    }  ///< true once consume() exceeded the budget
    std::uint64_t used() const noexcept { return used_.load(std::memory_order_acquire); }  ///< bytes consumed so far
    std::uint64_t max() const noexcept { return max_; }                                    ///< the budget

private:
    std::uint64_t max_;
    std::atomic<std::uint64_t> used_{0};
    std::atomic<bool> overflowed_{false};
};

class exec_governor;

/// A held concurrency slot plus the command's output budget. Move-only; the
/// slot returns to the governor when the permit is destroyed or reset().
class PRISM_E2B_API exec_permit {
public:
    exec_permit() = default;
    exec_permit(exec_permit&&) noexcept;             ///< takes the slot over; `other` holds none afterwards
    exec_permit& operator=(exec_permit&&) noexcept;  ///< returns this permit's slot, then takes `other`'s
    ~exec_permit();

    explicit operator bool() const noexcept { return state_ != nullptr; }  ///< true while it holds a slot
    /// Precondition: the permit holds a slot (operator bool).
    output_budget& budget() noexcept { return *budget_; }
    void reset() noexcept;  ///< returns the slot now (idempotent)

private:
    friend class exec_governor;
    struct shared_state;
    exec_permit(std::shared_ptr<shared_state> s, std::uint64_t max_output);
    std::shared_ptr<shared_state> state_;
    std::unique_ptr<output_budget> budget_;
};

/// Admits commands to one sandbox.
///
/// acquire() counts the command against max_commands (refunded when the wait
/// is cancelled), then waits in FIFO order for one of max_concurrent_execs
/// slots. No busy waiting; no lock is held across a suspension.
///
/// Thread safety: all members may be called concurrently from any thread. A
/// waiter's completion runs on the awaiting coroutine's executor.
class PRISM_E2B_API exec_governor {
public:
    /// `limits` must be valid (sandbox_limits::validate()).
    explicit exec_governor(sandbox_limits const& limits);
    ~exec_governor();
    exec_governor(exec_governor const&) = delete;
    exec_governor& operator=(exec_governor const&) = delete;

    /// Waits for a slot.
    /// Errors: errc::limit_exceeded when max_commands were already admitted
    /// (no waiting happens); errc::cancelled when per-operation cancellation
    /// (terminal, partial or total) fires while queued: the waiter leaves the
    /// queue, never takes a slot and its command is not counted.
    /// (A coroutine sees partial/total cancellation only after
    /// `co_await this_coro::reset_cancellation_state(enable_total_cancellation())`;
    /// co_spawn's default filter passes terminal cancellation only.)
    /// If the governor is destroyed while the caller waits: errc::cancelled.
    boost::asio::awaitable<result<exec_permit>> acquire();

    /// Counts one command against max_commands without taking a slot: a
    /// long-running process (start_process) is a command, but not an exec.
    /// Errors: errc::limit_exceeded when max_commands were already admitted.
    result<void> admit();

    std::uint32_t commands_admitted() const noexcept;  ///< commands admitted so far (counted against max_commands)
    std::uint32_t in_flight() const noexcept;          ///< commands holding a slot now
    std::uint32_t waiting() const noexcept;            ///< commands queued for a slot
    sandbox_limits const& limits() const noexcept;     ///< the limits it enforces

private:
    std::shared_ptr<exec_permit::shared_state> state_;
};

}  // namespace prism_e2b

#endif
