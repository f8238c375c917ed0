// exec_governor: max_commands accounting over the library's one FIFO
// semaphore (core/async_semaphore.hpp), which holds the concurrency slots.
//
// Synchronisation: a std::mutex in the shared state guards the admission
// count and the closed flag; the semaphore has its own. Neither is held while
// a coroutine is suspended.
#include <prism_e2b/exec_governor.hpp>

#include "core/async_semaphore.hpp"

#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

namespace prism_e2b {

namespace asio = boost::asio;

// Shared by the governor and every permit, so a permit may outlive the governor.
// A permit's slot is a detached unit of `slots`, returned by release().
struct exec_permit::shared_state {
    explicit shared_state(sandbox_limits const& l) : limits(l), slots(async_semaphore::create(l.max_concurrent_execs))
    {
    }

    sandbox_limits const limits;
    std::shared_ptr<async_semaphore> const slots;
    mutable std::mutex mutex;
    std::uint32_t admitted = 0;  // commands counted against max_commands
    bool closed = false;         // the governor is gone: no more admissions

    void release() noexcept { slots->release_detached(); }
};

// ---- output_budget -----------------------------------------------------------

bool output_budget::consume(std::uint64_t n) noexcept
{
    std::uint64_t prev = used_.load(std::memory_order_relaxed);
    std::uint64_t next = 0;
    do {
        // Saturate instead of wrapping around.
        next = n > UINT64_MAX - prev ? UINT64_MAX : prev + n;
    } while (!used_.compare_exchange_weak(prev, next, std::memory_order_acq_rel, std::memory_order_relaxed));
    if (next > max_) {
        overflowed_.store(true, std::memory_order_release);
        return false;
    }
    return true;
}

// ---- exec_permit ---------------------------------------------------------------

exec_permit::exec_permit(std::shared_ptr<shared_state> s, std::uint64_t max_output)
    : state_(std::move(s)), budget_(std::make_unique<output_budget>(max_output))
{
}

exec_permit::exec_permit(exec_permit&& other) noexcept
    : state_(std::move(other.state_)), budget_(std::move(other.budget_))
{
}

exec_permit& exec_permit::operator=(exec_permit&& other) noexcept
{
    if (this != &other) {
        reset();
        state_ = std::move(other.state_);
        budget_ = std::move(other.budget_);
    }
    return *this;
}

exec_permit::~exec_permit() { reset(); }

void exec_permit::reset() noexcept
{
    if (auto s = std::move(state_)) s->release();
    budget_.reset();
}

// ---- exec_governor -------------------------------------------------------------

exec_governor::exec_governor(sandbox_limits const& limits) : state_(std::make_shared<exec_permit::shared_state>(limits))
{
}

exec_governor::~exec_governor()
{
    // Queued waiters would otherwise wait forever: they fail (and are refunded).
    {
        std::lock_guard lock(state_->mutex);
        state_->closed = true;
    }
    state_->slots->close();
}

asio::awaitable<result<exec_permit>> exec_governor::acquire()
{
    // Not a coroutine itself: the awaitable is lazy and may be awaited after
    // the governor is gone, so it owns the shared state, passed by value (a
    // lambda's parameter lives in its frame, a capture would not).
    auto run = [](std::shared_ptr<exec_permit::shared_state> state) -> asio::awaitable<result<exec_permit>> {
        {
            std::lock_guard lock(state->mutex);
            if (state->closed) co_return error(errc::cancelled, "the exec governor was destroyed", {"acquire"});
            if (state->admitted >= state->limits.max_commands)
                co_return error(
                    errc::limit_exceeded,
                    "max_commands = " + std::to_string(state->limits.max_commands) + " commands already admitted",
                    {"acquire"});
            ++state->admitted;
        }
        auto refund = [&state] {
            std::lock_guard lock(state->mutex);
            --state->admitted;  // the command never ran
        };
        result<semaphore_permit> slot = error(errc::cancelled, "not started");
        try {
            slot = co_await state->slots->acquire();
        } catch (...) {
            refund();
            throw;
        }
        if (!slot) {
            refund();
            bool closed = false;
            {
                std::lock_guard lock(state->mutex);
                closed = state->closed;
            }
            co_return error(errc::cancelled,
                            closed ? "the exec governor was destroyed" : "cancelled while waiting for an exec slot",
                            {"acquire"});
        }
        slot->detach();  // the permit returns it through shared_state::release()
        co_return exec_permit(state, state->limits.max_output_bytes);
    };
    return run(state_);
}

result<void> exec_governor::admit()
{
    std::lock_guard lock(state_->mutex);
    if (state_->admitted >= state_->limits.max_commands)
        return error(errc::limit_exceeded,
                     "max_commands = " + std::to_string(state_->limits.max_commands) + " commands already admitted",
                     {"admit"});
    ++state_->admitted;
    return {};
}

std::uint32_t exec_governor::commands_admitted() const noexcept
{
    std::lock_guard lock(state_->mutex);
    return state_->admitted;
}

std::uint32_t exec_governor::in_flight() const noexcept
{
    return static_cast<std::uint32_t>(state_->slots->capacity() - state_->slots->available());
}

std::uint32_t exec_governor::waiting() const noexcept { return static_cast<std::uint32_t>(state_->slots->waiting()); }

sandbox_limits const& exec_governor::limits() const noexcept { return state_->limits; }

}  // namespace prism_e2b
