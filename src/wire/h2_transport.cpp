#include "wire/h2_transport.hpp"

#include "core/async_semaphore.hpp"
#include "wire/body_decoder.hpp"
#include "wire/connection.hpp"
#include "wire/h2_connection.hpp"
#include "wire/http1_exchange.hpp"
#include "wire/tls_client.hpp"
#include "wire/transport_log.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/string.hpp>

#include <map>
#include <mutex>
#include <openssl/ssl.h>
#include <vector>

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

namespace prism_e2b::wire {

namespace {

/// One origin's HTTP/2 connections. Thread safety: the mutex guards the list and the flag.
struct h2_origin {
    std::mutex mutex;
    std::vector<std::shared_ptr<h2_connection>> conns;
    /// One connection opened at a time per origin, so a burst of requests
    /// shares the first one instead of each opening its own.
    std::shared_ptr<async_semaphore> opening = async_semaphore::create(1);
    bool http1 = false;  ///< the server picked http/1.1 by ALPN
};

/// What acquire() found: an HTTP/2 connection with a reservation, or the HTTP/1.1 fallback.
struct pick {
    std::shared_ptr<h2_connection> conn;
    bool http1 = false;
};

}  // namespace

struct h2_transport::impl {
    impl(asio::any_io_executor e, transport_options o, std::shared_ptr<http_transport> h1,
         std::shared_ptr<lazy_tls_context> t)
        : ex(std::move(e)), opts(std::move(o)), http1(std::move(h1)), tls(std::move(t))
    {
    }
    ~impl()
    {
        for (auto& [k, p] : origins) {
            std::lock_guard lk(p->mutex);
            for (auto& c : p->conns) c->shutdown();
        }
    }

    asio::any_io_executor ex;
    transport_options opts;
    std::shared_ptr<http_transport> http1;
    std::shared_ptr<lazy_tls_context> tls;  ///< shared with http1
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<h2_origin>> origins;
    std::atomic<std::size_t> opened{0}, shared{0}, requests{0};

    bool wants_h2(origin const& o) const { return o.tls ? opts.http2 : opts.h2c_prior_knowledge; }

    std::shared_ptr<h2_origin> origin_for(origin const& o)
    {
        std::lock_guard lk(mutex);
        auto& p = origins[o.key()];
        if (!p) p = std::make_shared<h2_origin>();
        return p;
    }

    /// Under p.mutex: drops closed and long-idle connections, then reserves a
    /// stream on the least loaded one with room (or, at the connection cap, on
    /// the least loaded one at all, where nghttp2 queues it).
    std::shared_ptr<h2_connection> pick_locked(h2_origin& p)
    {
        auto const now = clock_type::now();
        std::erase_if(p.conns, [&](auto const& c) {
            if (!c->accepting()) return c->active() == 0 ? (c->shutdown(), true) : false;
            bool const stale = c->active() == 0 && opts.pool_idle_timeout.count() > 0 &&
                               now - c->idle_since() > opts.pool_idle_timeout;
            if (stale) c->shutdown();
            return stale;
        });
        std::shared_ptr<h2_connection> best;
        bool const at_cap = p.conns.size() >= std::max<std::size_t>(1, opts.max_connections_per_origin);
        for (auto const& c : p.conns) {
            if (!c->accepting()) continue;
            if (!at_cap && c->active() >= c->capacity()) continue;
            if (!best || c->active() < best->active()) best = c;
        }
        if (best) best->reserve();
        return best;
    }

    asio::awaitable<result<pick>> acquire(origin const& o)
    {
        auto p = origin_for(o);
        semaphore_permit opening;
        for (;;) {
            {
                std::lock_guard lk(p->mutex);
                if (p->http1) co_return pick{nullptr, true};
                if (auto c = pick_locked(*p)) {
                    shared.fetch_add(1);
                    co_return pick{std::move(c), false};
                }
            }
            if (opening) break;
            auto permit = co_await p->opening->acquire();
            if (!permit) co_return permit.error();
            opening = std::move(*permit);  // look again: the holder before us may have opened one
        }
        auto c = co_await open_connection(ex, *tls, o, opts.connect_timeout, o.tls && opts.http2);
        if (!c) co_return c.error();
        auto conn = *c;
        if (o.tls) {
            unsigned char const* proto = nullptr;
            unsigned len = 0;
            SSL_get0_alpn_selected(conn->tls->native_handle(), &proto, &len);
            if (std::string_view(reinterpret_cast<char const*>(proto), proto ? len : 0) != "h2") {
                // An HTTP/1.1 server: this origin goes to the HTTP/1.1 transport from now on.
                asio::dispatch(conn->strand, [conn] { conn->close_now(); });
                std::lock_guard lk(p->mutex);
                p->http1 = true;
                co_return pick{nullptr, true};
            }
        }
        h2_settings s;
        s.stream_window = opts.h2_stream_window;
        s.connection_window = opts.h2_connection_window;
        s.max_streams = static_cast<std::uint32_t>(std::max<std::size_t>(1, opts.max_streams_per_connection));
        std::string what = "HTTP/2 " + o.key();  // named: g++ 12 must not see temporaries inside co_await
        auto started = co_await on_strand(conn->strand, start_on_strand(conn, s, std::move(what)));
        if (!started) co_return started.error();
        opened.fetch_add(1);
        std::lock_guard lk(p->mutex);
        (*started)->reserve();
        p->conns.push_back(*started);
        co_return pick{*started, false};
    }

    static asio::awaitable<result<std::shared_ptr<h2_connection>>> start_on_strand(std::shared_ptr<connection> c,
                                                                                   h2_settings s, std::string what)
    {
        co_return h2_connection::start(std::move(c), s, std::move(what));
    }

    /// The bounds as http_transport computes them for one attempt.
    exchange_bounds bounds(call_options const& c) const
    {
        exchange_bounds b;
        b.deadline = c.attempt_deadline();
        b.header_timeout = opts.header_timeout;
        b.idle_timeout = opts.read_idle_timeout;
        b.max_body = c.max_response_bytes ? c.max_response_bytes : opts.max_response_bytes;
        return b;
    }

    /// Reads the whole body of `st` on the connection's strand, decoded under its cap.
    static asio::awaitable<result<http_response>> read_all(std::shared_ptr<h2_connection> c,
                                                           std::shared_ptr<h2_stream> st, exchange_bounds b,
                                                           std::string what)
    {
        http_response out;
        out.status = h2_connection::status_of(*st);
        out.headers = h2_connection::headers_of(*st);
        std::optional<std::uint64_t> length;
        if (auto const* cl = find_header(out.headers, "content-length")) {
            try {
                length = std::stoull(*cl);
            } catch (std::exception const&) {
                c->reset(st);
                co_return error(errc::protocol_error, what + ": bad content-length");
            }
        }
        if (length && *length > b.max_body) {
            c->reset(st);
            co_return error(errc::limit_exceeded, what + ": response too large");
        }
        auto decoder = body_decoder::create(find_header(out.headers, "content-encoding"), b.max_body, length);
        if (!decoder) {
            c->reset(st);
            co_return error(decoder.error().code(), what + ": " + decoder.error().message());
        }
        // A compressed body is bounded by its decoded size; the raw bound only
        // stops one that decodes to nothing forever.
        std::size_t const raw_cap = decoder->decodes() ? std::max<std::size_t>(b.max_body, 1u << 20) * 2 : b.max_body;
        std::size_t raw = 0;
        for (;;) {
            auto idle = b.idle_timeout;
            if (b.deadline != clock_type::time_point::max()) {
                auto const left = std::chrono::ceil<std::chrono::milliseconds>(b.deadline - clock_type::now());
                if (left.count() <= 0) {
                    c->reset(st);
                    co_return error(errc::timed_out, what + ": deadline passed");
                }
                if (idle.count() <= 0 || left < idle) idle = left;
            }
            auto piece = co_await c->read(st, idle, what);
            if (!piece) co_return piece.error();
            if (piece->empty()) break;
            raw += piece->size();
            if (raw > raw_cap) {
                c->reset(st);
                co_return error(errc::limit_exceeded, what + ": response too large");
            }
            if (auto fed = decoder->feed(*piece); !fed) {
                c->reset(st);
                co_return error(fed.error().code(), what + ": " + fed.error().message());
            }
        }
        auto body = decoder->finish();
        if (!body) co_return error(body.error().code(), what + ": " + body.error().message());
        if (decoder->decodes()) {
            std::erase_if(out.headers, [](auto const& h) {
                return boost::beast::iequals(h.first, "content-encoding") ||
                       boost::beast::iequals(h.first, "content-length");
            });
        }
        out.body = std::move(*body);
        co_return out;
    }

    static asio::awaitable<result<http_response>> exchange_on(std::shared_ptr<h2_connection> c, origin o,
                                                              http_request req, exchange_bounds b, bool gzip,
                                                              bool& replayable, std::string what)
    {
        auto const head_deadline = earliest(b.deadline, b.header_timeout);
        auto st = co_await c->open(o, req, gzip, head_deadline, replayable, what);
        if (!st) co_return st.error();
        co_return co_await read_all(c, std::move(*st), b, std::move(what));
    }

    static asio::awaitable<result<std::shared_ptr<h2_stream>>> open_on(std::shared_ptr<h2_connection> c, origin o,
                                                                       http_request req, time_point head_deadline,
                                                                       bool& replayable, std::string what)
    {
        co_return co_await c->open(o, req, false, head_deadline, replayable, std::move(what));
    }
};

h2_transport::h2_transport(std::shared_ptr<impl> p) : impl_(std::move(p)) {}
h2_transport::~h2_transport() = default;

result<std::shared_ptr<h2_transport>> h2_transport::create(asio::any_io_executor ex, transport_options opts)
{
    auto tls = lazy_tls_context::create(opts.ca_file);
    if (!tls) return tls.error();
    auto h1 = http_transport::create(ex, opts, *tls);
    if (!h1) return h1.error();
    auto p = std::make_shared<impl>(std::move(ex), std::move(opts), std::move(*h1), std::move(*tls));
    return std::shared_ptr<h2_transport>(new h2_transport(std::move(p)));
}

asio::awaitable<result<http_response>> h2_transport::request(origin o, http_request req, call_options opts)
{
    if (!impl_->wants_h2(o)) co_return co_await impl_->http1->request(std::move(o), std::move(req), opts);
    if (auto why = invalid_request(req)) co_return error(errc::invalid_argument, *why);
    auto const start = clock_type::now();
    std::string const what = req.method + " " + o.key() + path_of(o.base_path + req.target);
    result<http_response> r = error(errc::cancelled, "not started");
    try {
        // One replay when the server refused the stream unprocessed (GOAWAY, REFUSED_STREAM).
        for (int attempt = 0; attempt < 2; ++attempt) {
            auto p = co_await impl_->acquire(o);
            if (!p) {
                r = p.error();
                break;
            }
            if (p->http1) co_return co_await impl_->http1->request(std::move(o), std::move(req), opts);
            impl_->requests.fetch_add(1);
            bool replayable = false;
            auto conn = p->conn;
            auto const b = impl_->bounds(opts);
            bool const gzip = impl_->opts.accept_gzip;
            r = co_await on_strand(conn->strand(), impl::exchange_on(conn, o, req, b, gzip, replayable, what));
            if (r || !replayable) break;
        }
    } catch (boost::system::system_error const& e) {
        if (e.code() != asio::error::operation_aborted) throw;
        r = error(errc::cancelled, what + ": cancelled");
    }
    log_exchange(impl_->opts.logger, req.method, o, req.target, r ? r->status : 0, start,
                 r ? std::string_view("h2") : std::string_view(r.error().code().message()));
    co_return r;
}

asio::awaitable<result<std::unique_ptr<http_stream>>> h2_transport::open_stream(origin o, http_request req,
                                                                                call_options opts)
{
    if (!impl_->wants_h2(o)) co_return co_await impl_->http1->open_stream(std::move(o), std::move(req), opts);
    if (auto why = invalid_request(req)) co_return error(errc::invalid_argument, *why);
    auto const start = clock_type::now();
    std::string const what = req.method + " " + o.key() + path_of(o.base_path + req.target);
    result<std::unique_ptr<http_stream>> out = error(errc::cancelled, "not started");
    try {
        for (int attempt = 0; attempt < 2; ++attempt) {
            auto p = co_await impl_->acquire(o);
            if (!p) {
                out = p.error();
                break;
            }
            if (p->http1) co_return co_await impl_->http1->open_stream(std::move(o), std::move(req), opts);
            impl_->requests.fetch_add(1);
            bool replayable = false;
            auto conn = p->conn;
            auto const head_deadline = earliest(opts.attempt_deadline(), impl_->opts.header_timeout);
            auto st = co_await on_strand(conn->strand(), impl::open_on(conn, o, req, head_deadline, replayable, what));
            if (st) {
                out = make_h2_response_stream(conn, std::move(*st), what);
                break;
            }
            out = st.error();
            if (!replayable) break;
        }
    } catch (boost::system::system_error const& e) {
        if (e.code() != asio::error::operation_aborted) throw;
        out = error(errc::cancelled, what + ": cancelled");
    }
    log_exchange(impl_->opts.logger, req.method, o, req.target, out ? (*out)->status() : 0, start,
                 out ? std::string_view("h2 stream") : std::string_view(out.error().code().message()));
    co_return out;
}

transport_stats h2_transport::stats() const
{
    auto s = impl_->http1->stats();
    s.connections_opened += impl_->opened.load();
    s.connections_reused += impl_->shared.load();
    s.requests += impl_->requests.load();
    return s;
}

std::size_t h2_transport::open_connections(origin const& o) const
{
    std::shared_ptr<h2_origin> p;
    {
        std::lock_guard lk(impl_->mutex);
        auto it = impl_->origins.find(o.key());
        if (it == impl_->origins.end()) return 0;
        p = it->second;
    }
    std::lock_guard lk(p->mutex);
    return static_cast<std::size_t>(std::count_if(p->conns.begin(), p->conns.end(),
                                                  [](auto const& c) { return c->accepting() || c->active() > 0; }));
}

http_transport& h2_transport::http1() noexcept { return *impl_->http1; }

result<std::shared_ptr<exchange>> make_transport(asio::any_io_executor ex, transport_options opts)
{
    if (opts.http2 || opts.h2c_prior_knowledge) {
        auto t = h2_transport::create(std::move(ex), std::move(opts));
        if (!t) return t.error();
        return std::shared_ptr<exchange>(std::move(*t));
    }
    auto t = http_transport::create(std::move(ex), std::move(opts));
    if (!t) return t.error();
    return std::shared_ptr<exchange>(std::move(*t));
}

}  // namespace prism_e2b::wire
