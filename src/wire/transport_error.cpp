#include "wire/transport_error.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

#include <string>

namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace prism_e2b::wire {

bool cancelled(asio::cancellation_state const& cs) { return cs.cancelled() != asio::cancellation_type::none; }

error io_error(boost::system::error_code ec, asio::cancellation_state const& cs, std::string_view what)
{
    if (cancelled(cs)) return error(errc::cancelled, std::string(what) + ": cancelled");
    if (ec == boost::beast::error::timeout) return error(errc::timed_out, std::string(what) + ": deadline passed");
    if (ec == http::error::body_limit || ec == http::error::header_limit || ec == http::error::buffer_overflow)
        return error(errc::limit_exceeded, std::string(what) + ": response too large");
    return error(ec, std::string(what) + ": " + ec.message());
}

bool is_stale_connection_error(boost::system::error_code ec)
{
    return ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
           ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
           ec == asio::error::connection_aborted || ec == asio::ssl::error::stream_truncated;
}

}  // namespace prism_e2b::wire
