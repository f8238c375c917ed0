#include "wire/connection.hpp"

#include "wire/transport_error.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/error.hpp>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = asio::ssl;
using asio::ip::tcp;

namespace prism_e2b::wire {

void connection::close_now() noexcept
{
    boost::system::error_code ec;
    auto& s = lowest().socket();
    s.shutdown(tcp::socket::shutdown_both, ec);
    s.close(ec);
}

void connection::expire_at(std::chrono::steady_clock::time_point t)
{
    if (t == std::chrono::steady_clock::time_point::max())
        lowest().expires_never();
    else
        lowest().expires_at(t);
}

namespace {

asio::awaitable<result<tcp::resolver::results_type>> resolve(strand_type const& strand, origin const& o,
                                                             std::chrono::milliseconds timeout, std::string const& what)
{
    using namespace asio::experimental::awaitable_operators;
    auto cs = co_await asio::this_coro::cancellation_state;
    tcp::resolver resolver(strand);
    if (timeout.count() <= 0) {
        auto [ec, res] = co_await resolver.async_resolve(o.host, o.port, asio::as_tuple(asio::use_awaitable));
        if (ec) co_return io_error(ec, cs, what + " (resolve)");
        co_return std::move(res);
    }
    asio::steady_timer timer(strand, timeout);
    auto r = co_await (resolver.async_resolve(o.host, o.port, asio::as_tuple(asio::use_awaitable)) ||
                       timer.async_wait(asio::as_tuple(asio::use_awaitable)));
    if (r.index() == 1) {
        if (cancelled(cs)) co_return error(errc::cancelled, what + ": cancelled");
        co_return error(errc::timed_out, what + ": name resolution deadline passed");
    }
    auto [ec, res] = std::get<0>(std::move(r));
    if (ec) co_return io_error(ec, cs, what + " (resolve)");
    co_return std::move(res);
}

asio::awaitable<result<std::shared_ptr<connection>>> connect_on_strand(std::shared_ptr<connection> conn,
                                                                       lazy_tls_context& tls, origin o,
                                                                       std::chrono::milliseconds timeout, bool offer_h2)
{
    auto cs = co_await asio::this_coro::cancellation_state;
    std::string const what = "connect to " + o.key();
    auto endpoints = co_await resolve(conn->strand, o, timeout, what);
    if (!endpoints) co_return endpoints.error();
    if (o.tls) {
        auto ctx = tls.get();
        if (!ctx) co_return ctx.error();
        conn->tls.emplace(conn->strand, **ctx);
        if (auto p = prepare_tls(*conn->tls, o.host, offer_h2); !p)
            co_return error(p.error().code(), what + ": " + p.error().message());
    } else {
        conn->plain.emplace(conn->strand);
    }
    if (timeout.count() > 0)
        conn->lowest().expires_after(timeout);
    else
        conn->lowest().expires_never();
    auto [cec, ep] = co_await conn->lowest().async_connect(*endpoints, asio::as_tuple(asio::use_awaitable));
    if (cec) co_return io_error(cec, cs, what);
    conn->lowest().socket().set_option(tcp::no_delay(true));
    if (o.tls) {
        auto [hec] = co_await conn->tls->async_handshake(ssl::stream_base::client, asio::as_tuple(asio::use_awaitable));
        if (hec) {
            if (cancelled(cs)) co_return error(errc::cancelled, what + ": cancelled");
            if (hec == beast::error::timeout)
                co_return error(errc::timed_out, what + ": TLS handshake deadline passed");
            co_return handshake_error(hec, *conn->tls, what);
        }
    }
    co_return conn;
}

}  // namespace

asio::awaitable<result<std::shared_ptr<connection>>> open_connection(asio::any_io_executor ex, lazy_tls_context& tls,
                                                                     origin o, std::chrono::milliseconds timeout,
                                                                     bool offer_h2)
{
    auto conn = std::make_shared<connection>(asio::make_strand(ex));
    auto strand = conn->strand;
    co_return co_await on_strand(strand, connect_on_strand(std::move(conn), tls, std::move(o), timeout, offer_h2));
}

}  // namespace prism_e2b::wire
