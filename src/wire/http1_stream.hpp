// A streamed HTTP/1.1 response (Connect server streams): the head is read on
// opening, the body piecewise; the connection returns to its pool only when
// the body was read to its end.
#ifndef PRISM_E2B_WIRE_HTTP1_STREAM_HPP
#define PRISM_E2B_WIRE_HTTP1_STREAM_HPP

#include "wire/connection_pool.hpp"
#include "wire/http1_exchange.hpp"

#include <memory>

namespace prism_e2b::wire {

/// Writes `req` on the leased connection and reads the head by `head_deadline`.
/// The stream owns the lease. Errors: see io_error().
boost::asio::awaitable<result<std::unique_ptr<http_stream>>> open_stream_on(lease l, beast_request const& req,
                                                                            time_point head_deadline,
                                                                            exchange_progress& progress,
                                                                            std::string what);

}  // namespace prism_e2b::wire

#endif
