// One HTTP/1.1 connection (plain or TLS) on its own strand, and opening one:
// resolve, TCP connect and TLS handshake under the connect timeout.
#ifndef PRISM_E2B_WIRE_CONNECTION_HPP
#define PRISM_E2B_WIRE_CONNECTION_HPP

#include <prism_e2b/error.hpp>

#include "protocol/on_strand.hpp"
#include "wire/origin.hpp"
#include "wire/tls_client.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <chrono>
#include <memory>
#include <optional>

namespace prism_e2b::wire {

using strand_type = boost::asio::strand<boost::asio::any_io_executor>;

/// Thread safety: used on its strand only, except close_now() through dispatch.
struct connection {
    explicit connection(strand_type s) : strand(std::move(s)) {}
    strand_type strand;
    std::optional<boost::beast::tcp_stream> plain;
    std::optional<tls_stream> tls;
    boost::beast::flat_buffer buffer;
    std::chrono::steady_clock::time_point idle_since{};
    bool reused = false;  ///< taken from the pool's idle list at least once

    boost::beast::tcp_stream& lowest() { return tls ? boost::beast::get_lowest_layer(*tls) : *plain; }
    void close_now() noexcept;
    /// Every pending and later operation fails with beast::error::timeout at
    /// `t`; max() = never.
    void expire_at(std::chrono::steady_clock::time_point t);
    /// Calls f(stream) with the TLS or the plain stream.
    template <class F>
    decltype(auto) with_stream(F&& f)
    {
        if (tls) return f(*tls);
        return f(*plain);
    }
};

/// Opens a connection to `o` on a new strand of `ex`. Errors: errc::timed_out
/// (`connect_timeout` passed; 0 disables), errc::cancelled, resolver/socket
/// codes, a TLS handshake error naming the certificate problem.
/// A TLS origin takes the client's context from `tls` (made on this first use) and offers
/// ALPN h2 when `offer_h2`.
boost::asio::awaitable<result<std::shared_ptr<connection>>> open_connection(boost::asio::any_io_executor ex,
                                                                            lazy_tls_context& tls, origin o,
                                                                            std::chrono::milliseconds connect_timeout,
                                                                            bool offer_h2 = false);

/// Runs work on the connection's strand (so close() from another thread is
/// safe) while keeping the caller's cancellation.
using protocol::on_strand;

}  // namespace prism_e2b::wire

#endif
