#include "wire/http_transport.hpp"

#include "wire/connection_pool.hpp"
#include "wire/http1_exchange.hpp"
#include "wire/http1_stream.hpp"
#include "wire/stale_replay.hpp"
#include "wire/tls_client.hpp"
#include "wire/transport_error.hpp"
#include "wire/transport_log.hpp"

#include <boost/asio/ssl/context.hpp>

namespace asio = boost::asio;

namespace prism_e2b::wire {

struct http_transport::impl {
    impl(asio::any_io_executor e, transport_options o, std::shared_ptr<lazy_tls_context> t)
        : opts(std::move(o)),
          tls(std::move(t)),
          pool(std::move(e), *tls, opts.max_connections_per_origin, opts.pool_idle_timeout, opts.connect_timeout)
    {
    }

    transport_options opts;
    std::shared_ptr<lazy_tls_context> tls;
    connection_pool pool;
    std::atomic<std::size_t> requests{0};

    /// The bounds of an attempt that got its connection `waited` after it
    /// asked: waiting in line for a connection is client-side admission (FIFO,
    /// "more wait"), so it does not run down the call's deadline.
    exchange_bounds bounds(call_options c, std::chrono::steady_clock::duration waited) const
    {
        if (c.deadline != call_options::clock::time_point::max()) c.deadline += waited;
        exchange_bounds b;
        b.deadline = c.attempt_deadline();
        b.header_timeout = opts.header_timeout;
        b.idle_timeout = opts.read_idle_timeout;
        b.max_body = c.max_response_bytes ? c.max_response_bytes : opts.max_response_bytes;
        return b;
    }

    asio::awaitable<attempt_outcome<http_response>> request_once(origin const& o, beast_request const& breq,
                                                                 call_options const& c, std::string const& what,
                                                                 bool fresh, body_source* body)
    {
        auto const queued = std::chrono::steady_clock::now();
        auto l = co_await pool.acquire(o, fresh);
        if (!l) co_return attempt_outcome<http_response>{l.error()};
        auto const b = bounds(c, std::chrono::steady_clock::now() - queued);
        auto conn = l->conn;
        exchange_progress progress;
        auto r = co_await on_strand(conn->strand, exchange_on(*conn, breq, b, progress, what, body));
        if (!r) {
            bool const stale = conn->reused && !progress.got_bytes && is_stale_connection_error(r.error().code());
            co_return attempt_outcome<http_response>{std::move(r), stale};
        }
        l->reusable = progress.keep_alive;
        co_return attempt_outcome<http_response>{std::move(r)};
    }

    asio::awaitable<attempt_outcome<std::unique_ptr<http_stream>>> stream_once(origin const& o,
                                                                               beast_request const& breq,
                                                                               call_options const& c,
                                                                               std::string const& what, bool fresh)
    {
        using outcome = attempt_outcome<std::unique_ptr<http_stream>>;
        auto const queued = std::chrono::steady_clock::now();
        auto l = co_await pool.acquire(o, fresh);
        if (!l) co_return outcome{l.error()};
        auto const head_deadline =
            earliest(bounds(c, std::chrono::steady_clock::now() - queued).deadline, opts.header_timeout);
        bool const reused = l->conn->reused;
        exchange_progress progress;
        auto s = co_await open_stream_on(std::move(*l), breq, head_deadline, progress, what);
        if (!s) {
            bool const stale = reused && !progress.got_bytes && is_stale_connection_error(s.error().code());
            co_return outcome{std::move(s), stale};
        }
        co_return outcome{std::move(s)};
    }
};

http_transport::http_transport(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
http_transport::~http_transport() = default;

result<std::shared_ptr<http_transport>> http_transport::create(asio::any_io_executor ex, transport_options opts,
                                                               std::shared_ptr<lazy_tls_context> tls)
{
    if (!tls) {
        auto made = lazy_tls_context::create(opts.ca_file);
        if (!made) return made.error();
        tls = std::move(*made);
    }
    auto p = std::make_unique<impl>(std::move(ex), std::move(opts), std::move(tls));
    return std::shared_ptr<http_transport>(new http_transport(std::move(p)));
}

asio::awaitable<result<http_response>> http_transport::request(origin o, http_request req, call_options opts)
{
    if (auto why = invalid_request(req)) co_return error(errc::invalid_argument, *why);
    auto const start = std::chrono::steady_clock::now();
    impl_->requests.fetch_add(1);
    auto const breq = to_beast(o, req, impl_->opts.accept_gzip);
    std::string const what = req.method + " " + o.key() + path_of(o.base_path + req.target);
    result<http_response> r = error(errc::cancelled, "not started");
    try {
        auto* self = impl_.get();
        auto* body = req.body_stream.get();
        std::function<asio::awaitable<attempt_outcome<http_response>>(bool)> attempt = [self, &o, &breq, &opts, &what,
                                                                                        body](bool fresh) {
            return self->request_once(o, breq, opts, what, fresh, body);
        };
        r = co_await replay_if_stale(attempt);
    } catch (boost::system::system_error const& e) {
        // A coroutine cancelled before it suspends throws operation_aborted.
        if (e.code() != asio::error::operation_aborted) throw;
        r = error(errc::cancelled, what + ": cancelled");
    }
    log_exchange(impl_->opts.logger, req.method, o, req.target, r ? r->status : 0, start,
                 r ? std::string_view{} : std::string_view(r.error().code().message()));
    co_return r;
}

asio::awaitable<result<std::unique_ptr<http_stream>>> http_transport::open_stream(origin o, http_request req,
                                                                                  call_options opts)
{
    if (auto why = invalid_request(req)) co_return error(errc::invalid_argument, *why);
    auto const start = std::chrono::steady_clock::now();
    impl_->requests.fetch_add(1);
    auto const breq = to_beast(o, req, false);  // Connect streams are not content-encoded
    std::string const what = req.method + " " + o.key() + path_of(o.base_path + req.target);
    result<std::unique_ptr<http_stream>> out = error(errc::cancelled, "not started");
    try {
        auto* self = impl_.get();
        std::function<asio::awaitable<attempt_outcome<std::unique_ptr<http_stream>>>(bool)> attempt =
            [self, &o, &breq, &opts, &what](bool fresh) { return self->stream_once(o, breq, opts, what, fresh); };
        out = co_await replay_if_stale(attempt);
    } catch (boost::system::system_error const& e) {
        if (e.code() != asio::error::operation_aborted) throw;
        out = error(errc::cancelled, what + ": cancelled");
    }
    log_exchange(impl_->opts.logger, req.method, o, req.target, out ? (*out)->status() : 0, start,
                 out ? std::string_view("stream") : std::string_view(out.error().code().message()));
    co_return out;
}

asio::awaitable<result<http_response>> http_transport::request(origin o, http_request req,
                                                               std::chrono::milliseconds timeout)
{
    call_options c;
    c.attempt_timeout = timeout;
    co_return co_await request(std::move(o), std::move(req), c);
}

asio::awaitable<result<std::unique_ptr<http_stream>>> http_transport::open_stream(origin o, http_request req,
                                                                                  std::chrono::milliseconds timeout)
{
    call_options c;
    c.attempt_timeout = timeout;
    co_return co_await open_stream(std::move(o), std::move(req), c);
}

transport_stats http_transport::stats() const
{
    return {impl_->pool.opened(), impl_->pool.reused(), impl_->requests.load()};
}

std::size_t http_transport::open_connections(origin const& o) const { return impl_->pool.open_connections(o); }

}  // namespace prism_e2b::wire
