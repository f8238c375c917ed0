// The one bridge from a public do_x(args..., completion_handler<T>) to the
// adapter's internal coroutines: co_spawn the body on the object's executor
// and complete the type-erased handler with its result.
#ifndef PRISM_E2B_ADAPTER_SPAWN_OP_HPP
#define PRISM_E2B_ADAPTER_SPAWN_OP_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/error.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>

#include <exception>
#include <utility>

namespace prism_e2b::detail {

/// co_spawn's completion for a completion_handler<T>: forwards the caller's
/// cancellation slot (so bind_cancellation_slot reaches the coroutine) and
/// executor (so the handler runs where the caller asked; `fallback` otherwise),
/// and turns an escaped exception into an error instead of throwing it.
template <class T>
struct spawn_completion {
    completion_handler<T> handler;
    boost::asio::any_io_executor fallback;

    using cancellation_slot_type = boost::asio::cancellation_slot;
    cancellation_slot_type get_cancellation_slot() const noexcept { return handler.get_cancellation_slot(); }
    using executor_type = boost::asio::any_completion_executor;
    executor_type get_executor() const noexcept { return boost::asio::get_associated_executor(handler, fallback); }

    void operator()(std::exception_ptr e, result<T> r)
    {
        if (e) r = error(errc::server_error, "internal error: an exception escaped the operation", {});
        std::move(handler)(std::move(r));
    }
};

/// Runs `body` on `ex` and completes `h` with its result.
template <class T, class Executor>
void spawn_op(Executor const& ex, boost::asio::awaitable<result<T>> body, completion_handler<T> h)
{
    boost::asio::any_io_executor fallback(ex);
    boost::asio::co_spawn(ex, std::move(body), spawn_completion<T>{std::move(h), std::move(fallback)});
}

}  // namespace prism_e2b::detail

#endif
