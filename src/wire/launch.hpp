// The bridge from a compiled entry point of an async_x operation (its
// any_completion_handler) to a coroutine member of client_impl: one mechanism
// for every operation that exists only on the real client (e2b/pty.hpp,
// e2b/metrics.hpp).
#ifndef PRISM_E2B_WIRE_LAUNCH_HPP
#define PRISM_E2B_WIRE_LAUNCH_HPP

#include "wire/client_impl.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>

#include <exception>

namespace prism_e2b::wire {

/// Runs `op(impl)` (an awaitable<result<T>>) on the real client's executor and
/// completes `handler` with its result; any other client answers errc::unsupported.
template <class T, class Op>
void launch(e2b::client& c, char const* name, boost::asio::any_completion_handler<void(result<T>)> handler, Op op)
{
    auto* impl = dynamic_cast<client_impl*>(&c);
    if (!impl) {
        // Through the handler's own executor (any_completion_executor cannot post).
        result<T> r = error(errc::unsupported, "this operation needs the client of make_client()", {name, 0, {}});
        boost::asio::dispatch(boost::asio::append(std::move(handler), std::move(r)));
        return;
    }
    boost::asio::co_spawn(impl->executor(), op(*impl),
                          [h = std::move(handler), name](std::exception_ptr e, result<T> r) mutable {
                              if (e)
                                  r = error(errc::unknown_outcome, "the operation failed unexpectedly", {name, 0, {}});
                              std::move(h)(std::move(r));
                          });
}

}  // namespace prism_e2b::wire

#endif
