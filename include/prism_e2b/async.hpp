// The universal asynchronous model of every public operation (issue 12).
//
// Every operation is `async_x(args..., CompletionToken&& token = {})` with the
// completion signature `void(prism_e2b::result<T>)`:
//
//   auto r = co_await sb->async_exec(exec_request::shell("echo hi"));   // default token: use_awaitable
//   auto f = sb->async_exec(req, boost::asio::use_future);              // std::future<result<exec_result>>
//   auto op = sb->async_exec(req, boost::asio::deferred);               // run later, compose
//   sb->async_exec(req, [](result<exec_result> r) { ... });             // a plain callback
//
// Errors are values, never exceptions: the completion carries result<T>
// (as boost::mysql's non-throwing overloads do); call `.value()` to throw
// prism_e2b::exception instead. Nothing in the library throws through a
// completion handler.
//
// The template initiation lives in the header; the work is compiled code
// reached through boost::asio::any_completion_handler, so Beast, JSON and
// OpenSSL stay out of public headers and out of callers' translation units.
// The initiation copies (decays) every argument before the operation starts,
// so arguments need not outlive the call, even with `deferred`. The object the
// operation runs on (the sandbox, the process handle...) must outlive it.
//
// Completion: on the handler's associated executor (for co_await: the awaiting
// coroutine's executor); a handler without one completes on the object's
// executor. Per-operation cancellation: bind a slot to the token
// (boost::asio::bind_cancellation_slot); each function says which types it
// honours. No co_spawn wrapper is needed.
#ifndef PRISM_E2B_ASYNC_HPP
#define PRISM_E2B_ASYNC_HPP

#include <prism_e2b/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <utility>

namespace prism_e2b {

/// The type-erased handler compiled code receives: `void(result<T>)`.
template <class T>
using completion_handler = boost::asio::any_completion_handler<void(result<T>)>;

/// The default completion token of every async_x: `co_await` yields result<T>.
using default_completion_token = boost::asio::use_awaitable_t<>;

namespace detail {

/// The initiation of every async_x: `start(decayed args..., handler)`, where
/// `start` calls the compiled (often virtual) do_x. Arguments arrive by value,
/// so no temporary of the caller is referenced once the initiation ran.
template <class T, class CompletionToken, class Start, class... Args>
auto initiate(CompletionToken&& token, Start start, Args&&... args)
{
    return boost::asio::async_initiate<CompletionToken, void(result<T>)>(
        [start](auto handler, auto... a) mutable { start(std::move(a)..., completion_handler<T>(std::move(handler))); },
        token, std::forward<Args>(args)...);
}

}  // namespace detail

}  // namespace prism_e2b

#endif
