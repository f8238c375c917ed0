// Waiting on a state instead of polling: a condition/notify primitive for
// coroutines, bound to one strand. Waiters re-check their predicate on every
// notification; a notification is never lost between the check and the wait
// because both the check and the wake-up run on the strand.
#ifndef PRISM_E2B_ADAPTER_STATE_WAITERS_HPP
#define PRISM_E2B_ADAPTER_STATE_WAITERS_HPP

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace prism_e2b::detail {

/// How a wait ended. A plain enum, not result<bool>: boost::system::result<bool>
/// would build its value from an error (error converts to bool).
enum class wait_outcome { satisfied, deadline_passed, cancelled };

/// Thread safety: notify_all() from any thread; wait_until() only from a
/// coroutine running on strand().
class state_waiters {
public:
    using strand_type = boost::asio::strand<boost::asio::any_io_executor>;
    using clock = std::chrono::steady_clock;

    explicit state_waiters(strand_type strand) : shared_(std::make_shared<shared>(std::move(strand))) {}

    strand_type const& strand() const noexcept { return shared_->strand; }

    /// Wakes every waiter so it re-checks its predicate.
    void notify_all() const
    {
        boost::asio::dispatch(shared_->strand, [s = shared_] {
            for (auto* t : s->timers) t->cancel();
        });
    }

    /// Waits until `pred()` holds (satisfied), `deadline` passes first
    /// (deadline_passed) or per-operation cancellation fires (cancelled; it
    /// turns off throw_if_cancelled for the calling coroutine). Call on strand().
    template <class Pred>
    boost::asio::awaitable<wait_outcome> wait_until(Pred pred, std::optional<clock::time_point> deadline) const
    {
        namespace asio = boost::asio;
        co_await asio::this_coro::throw_if_cancelled(false);
        auto s = shared_;
        for (;;) {
            if (pred()) co_return wait_outcome::satisfied;
            if (deadline && clock::now() >= *deadline) co_return wait_outcome::deadline_passed;
            auto const cs = co_await asio::this_coro::cancellation_state;
            if (cs.cancelled() != asio::cancellation_type::none) co_return wait_outcome::cancelled;
            asio::steady_timer t(s->strand, deadline.value_or(clock::time_point::max()));
            s->timers.push_back(&t);
            co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
            std::erase(s->timers, &t);
        }
    }

private:
    struct shared {
        explicit shared(strand_type s) : strand(std::move(s)) {}
        strand_type strand;
        std::vector<boost::asio::steady_timer*> timers;  // strand only
    };
    std::shared_ptr<shared> shared_;
};

}  // namespace prism_e2b::detail

#endif
