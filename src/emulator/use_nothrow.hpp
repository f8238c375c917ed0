// The completion token of the server's coroutines where a failure is an outcome
// to handle (a client gone, a timer cancelled), not an exception: the error code
// comes back as the first element of a tuple.
#ifndef PRISM_E2B_EMULATOR_USE_NOTHROW_HPP
#define PRISM_E2B_EMULATOR_USE_NOTHROW_HPP

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace prism_e2b::local::detail {

inline constexpr auto use_nothrow = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace prism_e2b::local::detail

#endif  // PRISM_E2B_EMULATOR_USE_NOTHROW_HPP
