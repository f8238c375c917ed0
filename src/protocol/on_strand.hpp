// Runs a coroutine on a strand and resumes the caller on its own executor,
// forwarding the caller's cancellation to the coroutine. The one strand hop of
// the client (its connections), the adapter (its process table) and the local
// server (a process's stdin).
//
// Why not `co_await co_spawn(strand, work, use_awaitable)`: Asio 1.81's
// co_spawn forwards a cancellation by posting `emit` to the strand with a raw
// pointer into the handler it installed in the caller's cancellation slot. When
// the work completes before that post runs, the caller resumes, clears its slot
// and frees that handler, and the post then emits through freed memory
// (chriskohlhoff/asio#1332; seen as an AddressSanitizer heap-use-after-free).
// Here the signal the strand emits belongs to a shared state that every pending
// forward holds, so a late forward finds the finished work and does nothing.
#ifndef PRISM_E2B_PROTOCOL_ON_STRAND_HPP
#define PRISM_E2B_PROTOCOL_ON_STRAND_HPP

#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>
#include <type_traits>
#include <utility>

namespace prism_e2b::protocol {

namespace detail {

template <class Work>
struct spawned {
    using type = std::invoke_result_t<Work&>;  // a callable returning an awaitable
};
template <class T, class Executor>
struct spawned<boost::asio::awaitable<T, Executor>> {
    using type = boost::asio::awaitable<T, Executor>;
};

}  // namespace detail

/// What co_await-ing `work` (an awaitable, or a callable returning one, which
/// co_spawn keeps alive until it is done) on `strand` gives.
template <class Work>
using on_strand_result = typename detail::spawned<Work>::type::value_type;

/// co_awaits `work` on `strand`; the caller resumes on its own executor. A
/// cancellation of the caller reaches `work` on the strand, through a signal
/// owned jointly by the caller's slot handler and every forward still queued
/// on the strand.
template <class Strand, class Work>
boost::asio::awaitable<on_strand_result<Work>> on_strand(Strand strand, Work work)
{
    namespace asio = boost::asio;
    asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
    std::shared_ptr<asio::cancellation_signal> forward;  // emitted on the strand only
    asio::cancellation_slot work_slot;                   // not connected: nothing can cancel the caller
    if (auto slot = state.slot(); slot.is_connected()) {
        forward = std::make_shared<asio::cancellation_signal>();
        work_slot = forward->slot();
        // Cleared by Asio when the co_spawn below completes; a forward already
        // queued keeps `forward` alive.
        slot.assign([forward, strand](asio::cancellation_type type) {
            asio::dispatch(strand, [forward, type] { forward->emit(type); });
        });
    }
    co_return co_await asio::co_spawn(strand, std::move(work),
                                      asio::bind_cancellation_slot(work_slot, asio::use_awaitable));
}

}  // namespace prism_e2b::protocol

#endif
