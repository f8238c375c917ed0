// The one bridge from a public do_x(args..., completion_handler<T>) to the
// library's internal coroutines (the adapter, the real client,
// coroutine_client): co_spawn the body on the object's executor and complete
// the type-erased handler with its result.
#ifndef PRISM_E2B_CORE_SPAWN_OP_HPP
#define PRISM_E2B_CORE_SPAWN_OP_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/error.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <memory>
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
        if (e) r = escaped(e);
        std::move(handler)(std::move(r));
    }

    /// A coroutine cancelled where it awaits with throw_if_cancelled (Asio's
    /// default) throws operation_aborted: that is the cancellation, not a fault.
    static error escaped(std::exception_ptr e)
    {
        try {
            std::rethrow_exception(e);
        } catch (boost::system::system_error const& se) {
            if (se.code() == boost::asio::error::operation_aborted)
                return error(errc::cancelled, "the operation was cancelled", {});
        } catch (...) {
        }
        return error(errc::server_error, "internal error: an exception escaped the operation", {});
    }
};

/// spawn_completion for a body whose cancellation is relayed (see spawn_op): the
/// caller's slot is cleared before its handler runs, so nothing of the finished
/// operation stays installed in it.
template <class T>
struct relayed_completion {
    spawn_completion<T> inner;
    std::shared_ptr<boost::asio::cancellation_signal> signal;  ///< the body's slot lives in it

    using executor_type = boost::asio::any_completion_executor;
    executor_type get_executor() const noexcept { return inner.get_executor(); }

    void operator()(std::exception_ptr e, result<T> r)
    {
        if (auto slot = inner.handler.get_cancellation_slot(); slot.is_connected()) slot.clear();
        inner(e, std::move(r));
    }
};

/// Runs `body` on `ex` and completes `h` with its result.
///
/// A caller that can cancel emits on its own strand or thread, and Asio's
/// cancellation state is not thread-safe: on a multi-threaded io_context an emit
/// racing the body's step is a data race. So a cancellable body runs on a strand
/// of its own and the caller's emit is dispatched onto that strand.
template <class T, class Executor>
void spawn_op(Executor const& ex, boost::asio::awaitable<result<T>> body, completion_handler<T> h)
{
    namespace asio = boost::asio;
    asio::any_io_executor fallback(ex);
    auto slot = h.get_cancellation_slot();
    if (!slot.is_connected()) {
        asio::co_spawn(ex, std::move(body), spawn_completion<T>{std::move(h), std::move(fallback)});
        return;
    }
    auto strand = asio::make_strand(ex);
    auto sig = std::make_shared<asio::cancellation_signal>();
    slot.assign([sig, strand](asio::cancellation_type t) { asio::dispatch(strand, [sig, t] { sig->emit(t); }); });
    asio::co_spawn(
        strand, std::move(body),
        asio::bind_cancellation_slot(
            sig->slot(), relayed_completion<T>{spawn_completion<T>{std::move(h), std::move(fallback)}, sig}));
}

}  // namespace prism_e2b::detail

#endif
