// How the transport turns Asio/Beast/OpenSSL failures into prism_e2b errors,
// and which failures mean "the pooled connection had gone stale".
#ifndef PRISM_E2B_WIRE_TRANSPORT_ERROR_HPP
#define PRISM_E2B_WIRE_TRANSPORT_ERROR_HPP

#include <prism_e2b/error.hpp>

#include <boost/asio/cancellation_state.hpp>
#include <boost/system/error_code.hpp>

#include <string_view>

namespace prism_e2b::wire {

/// Did the caller cancel the coroutine that owns `cs`? (A plain function: GCC 12
/// miscompiles some nested coroutine helpers on error paths.)
bool cancelled(boost::asio::cancellation_state const& cs);

/// errc::cancelled when the caller cancelled, errc::timed_out for a passed
/// deadline, errc::limit_exceeded for a response over its bounds, else the
/// code itself with `what` and its message.
error io_error(boost::system::error_code ec, boost::asio::cancellation_state const& cs, std::string_view what);

/// A failure a server's close of an idle keep-alive connection produces.
bool is_stale_connection_error(boost::system::error_code ec);

}  // namespace prism_e2b::wire

#endif
