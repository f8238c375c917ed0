#include "wire/http_transport.hpp"

#include "wire/async_semaphore.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using asio::ip::tcp;
using boost::system::error_code;
using namespace std::chrono_literals;

namespace prism_e2b::wire {

// ---- plain helpers ----------------------------------------------------------

namespace {

bool iequals(std::string_view a, std::string_view b) noexcept
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool is_ip_literal(std::string const& host)
{
    error_code ec;
    asio::ip::make_address(host, ec);
    return !ec;
}

}  // namespace

std::string const* find_header(header_list const& headers, std::string_view name) noexcept
{
    for (auto const& [k, v] : headers)
        if (iequals(k, name)) return &v;
    return nullptr;
}

std::string origin::key() const { return std::string(tls ? "https://" : "http://") + lower(host) + ":" + port; }

std::string origin::host_header() const
{
    std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    if ((tls && port == "443") || (!tls && port == "80")) return h;
    return h + ":" + port;
}

result<origin> parse_origin(std::string_view url)
{
    origin o;
    auto bad = [&](std::string_view why) -> result<origin> {
        return error(errc::invalid_argument, "invalid URL '" + std::string(url) + "': " + std::string(why));
    };
    std::string_view rest;
    if (url.substr(0, 8) == "https://") {
        o.tls = true;
        rest = url.substr(8);
    } else if (url.substr(0, 7) == "http://") {
        o.tls = false;
        rest = url.substr(7);
    } else {
        return bad("the scheme must be http or https");
    }
    auto slash = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    if (!path.empty() && path.front() != '/') return bad("query or fragment not allowed");
    if (authority.find('@') != std::string_view::npos) return bad("user info not allowed");
    if (authority.empty()) return bad("missing host");
    if (authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) return bad("unterminated IPv6 literal");
        o.host = std::string(authority.substr(1, close - 1));
        auto after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return bad("garbage after IPv6 literal");
            o.port = std::string(after.substr(1));
        }
    } else {
        auto colon = authority.rfind(':');
        if (colon != std::string_view::npos) {
            o.host = std::string(authority.substr(0, colon));
            o.port = std::string(authority.substr(colon + 1));
        } else {
            o.host = std::string(authority);
        }
    }
    if (o.host.empty()) return bad("missing host");
    if (o.port.empty()) o.port = o.tls ? "443" : "80";
    if (o.port.size() > 5 || !std::all_of(o.port.begin(), o.port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoul(o.port) == 0 || std::stoul(o.port) > 65535)
        return bad("invalid port");
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    o.base_path = std::string(path);
    return o;
}

// ---- connections and pools --------------------------------------------------

namespace {

using strand_type = asio::strand<asio::any_io_executor>;

struct connection {
    explicit connection(strand_type s) : strand(std::move(s)) {}
    strand_type strand;
    std::optional<beast::tcp_stream> plain;
    std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
    beast::flat_buffer buffer;
    std::chrono::steady_clock::time_point idle_since{};
    bool reused = false;

    beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
    void close_now() noexcept
    {
        error_code ec;
        auto& s = lowest().socket();
        s.shutdown(tcp::socket::shutdown_both, ec);
        s.close(ec);
    }
    void set_deadline(std::chrono::milliseconds t)
    {
        if (t.count() > 0)
            lowest().expires_after(t);
        else
            lowest().expires_never();
    }
};

struct origin_pool {
    explicit origin_pool(std::size_t cap) : slots(async_semaphore::create(cap)) {}
    std::shared_ptr<async_semaphore> slots;
    std::mutex mutex;
    std::vector<std::shared_ptr<connection>> idle;  // most recently used last
    std::size_t open = 0;                           // guarded by mutex

    std::shared_ptr<connection> take_idle(std::chrono::milliseconds max_idle)
    {
        std::vector<std::shared_ptr<connection>> expired;
        std::shared_ptr<connection> found;
        {
            std::lock_guard lock(mutex);
            auto const now = std::chrono::steady_clock::now();
            while (!idle.empty()) {
                auto c = std::move(idle.back());
                idle.pop_back();
                if (now - c->idle_since > max_idle || !c->lowest().socket().is_open()) {
                    expired.push_back(std::move(c));
                    --open;
                    continue;
                }
                found = std::move(c);
                break;
            }
        }
        for (auto& c : expired) c->close_now();
        return found;
    }
    void put_idle(std::shared_ptr<connection> c)
    {
        c->idle_since = std::chrono::steady_clock::now();
        c->reused = true;
        std::lock_guard lock(mutex);
        idle.push_back(std::move(c));
    }
    void opened()
    {
        std::lock_guard lock(mutex);
        ++open;
    }
    void discard(std::shared_ptr<connection> const& c)
    {
        // On the connection's strand: a stream's close() may be closing the same
        // socket there right now (found by TSan).
        asio::dispatch(c->strand, [c] { c->close_now(); });
        std::lock_guard lock(mutex);
        --open;
    }
};

/// A connection checked out of its pool plus the slot it occupies. On
/// destruction the connection returns to the pool when `reusable`, else closes.
struct lease {
    lease() = default;
    lease(lease&&) = default;
    lease& operator=(lease&& o) noexcept
    {
        if (this != &o) {
            reset();
            pool = std::move(o.pool);
            conn = std::move(o.conn);
            permit = std::move(o.permit);
            reusable = o.reusable;
        }
        return *this;
    }
    ~lease() { reset(); }
    void reset() noexcept
    {
        if (conn && pool) {
            if (reusable)
                pool->put_idle(std::move(conn));  // before the permit: the next waiter finds it idle
            else
                pool->discard(conn);
        }
        conn.reset();
        pool.reset();
        permit.reset();
        reusable = false;
    }

    std::shared_ptr<origin_pool> pool;
    std::shared_ptr<connection> conn;
    semaphore_permit permit;
    bool reusable = false;
};

/// Did the caller cancel the coroutine that owns `cs`? (A plain function: GCC 12
/// miscompiles some nested coroutine helpers on error paths.)
bool cancelled(asio::cancellation_state const& cs) { return cs.cancelled() != asio::cancellation_type::none; }

error io_error(error_code ec, asio::cancellation_state const& cs, std::string_view what)
{
    if (cancelled(cs)) return error(errc::cancelled, std::string(what) + ": cancelled");
    if (ec == beast::error::timeout) return error(errc::timed_out, std::string(what) + ": deadline passed");
    if (ec == http::error::body_limit || ec == http::error::header_limit || ec == http::error::buffer_overflow)
        return error(errc::limit_exceeded, std::string(what) + ": response too large");
    return error(ec, std::string(what) + ": " + ec.message());
}

bool is_stale_connection_error(error_code ec)
{
    return ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
           ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
           ec == asio::error::connection_aborted || ec == ssl::error::stream_truncated;
}

http::request<http::string_body> to_beast(origin const& o, http_request const& r)
{
    http::request<http::string_body> out;
    auto verb = http::string_to_verb(r.method);
    if (verb == http::verb::unknown)
        out.method_string(r.method);
    else
        out.method(verb);
    out.target(o.base_path + r.target);
    out.version(11);
    out.set(http::field::host, o.host_header());
    for (auto const& [k, v] : r.headers) out.insert(k, v);
    out.body() = r.body;
    out.keep_alive(true);
    out.prepare_payload();
    return out;
}

/// Header injection guard: names are tokens, values and the target carry no
/// CR, LF or NUL (a sandbox id or path from user input must not add headers).
std::optional<std::string> invalid_request(http_request const& r)
{
    auto bad_char = [](std::string_view s) {
        return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
    };
    if (r.method.empty() || bad_char(r.method) || r.method.find(' ') != std::string::npos) return "invalid HTTP method";
    if (r.target.empty() || r.target.front() != '/' || bad_char(r.target) || r.target.find(' ') != std::string::npos)
        return "invalid request target";
    for (auto const& [k, v] : r.headers) {
        if (k.empty() || bad_char(k) || k.find_first_of(" :") != std::string::npos) return "invalid header name";
        if (bad_char(v)) return "invalid value of header " + k;
    }
    return std::nullopt;
}

header_list from_beast(http::fields const& f)
{
    header_list out;
    for (auto const& h : f) out.emplace_back(std::string(h.name_string()), std::string(h.value()));
    return out;
}

std::string path_of(std::string const& target) { return target.substr(0, target.find('?')); }

// Runs `a` on the connection's strand (so close() from another thread is safe)
// while keeping the caller's cancellation.
template <class T>
asio::awaitable<T> on_strand(strand_type const& s, asio::awaitable<T> a)
{
    co_return co_await asio::co_spawn(s, std::move(a), asio::use_awaitable);
}

}  // namespace

// ---- the transport ----------------------------------------------------------

struct http_transport::impl {
    impl(asio::any_io_executor e, transport_options o) : ex(std::move(e)), opts(std::move(o)) {}

    asio::any_io_executor ex;
    transport_options opts;
    ssl::context ctx{ssl::context::tls_client};
    mutable std::mutex mutex;
    std::map<std::string, std::shared_ptr<origin_pool>> pools;
    std::atomic<std::size_t> opened{0}, reused{0}, requests{0};

    std::shared_ptr<origin_pool> pool_for(origin const& o)
    {
        std::lock_guard lock(mutex);
        auto& p = pools[o.key()];
        if (!p) p = std::make_shared<origin_pool>(std::max<std::size_t>(1, opts.max_connections_per_origin));
        return p;
    }

    asio::awaitable<result<std::shared_ptr<connection>>> connect(origin o)
    {
        auto conn = std::make_shared<connection>(asio::make_strand(ex));
        co_return co_await on_strand(conn->strand, connect_on_strand(conn, std::move(o)));
    }

    asio::awaitable<result<std::shared_ptr<connection>>> connect_on_strand(std::shared_ptr<connection> conn, origin o)
    {
        using namespace asio::experimental::awaitable_operators;
        auto cs = co_await asio::this_coro::cancellation_state;
        std::string const what = "connect to " + o.key();
        tcp::resolver resolver(conn->strand);
        tcp::resolver::results_type endpoints;
        if (opts.connect_timeout.count() > 0) {
            asio::steady_timer timer(conn->strand, opts.connect_timeout);
            auto r = co_await (resolver.async_resolve(o.host, o.port, asio::as_tuple(asio::use_awaitable)) ||
                               timer.async_wait(asio::as_tuple(asio::use_awaitable)));
            if (r.index() == 1) {
                if (cancelled(cs)) co_return error(errc::cancelled, what + ": cancelled");
                co_return error(errc::timed_out, what + ": name resolution deadline passed");
            }
            auto [ec, res] = std::get<0>(std::move(r));
            if (ec) co_return io_error(ec, cs, what + " (resolve)");
            endpoints = std::move(res);
        } else {
            auto [ec, res] = co_await resolver.async_resolve(o.host, o.port, asio::as_tuple(asio::use_awaitable));
            if (ec) co_return io_error(ec, cs, what + " (resolve)");
            endpoints = std::move(res);
        }
        if (o.tls) {
            conn->tls.emplace(conn->strand, ctx);
            auto* native = conn->tls->native_handle();
            // SNI carries names only, never IP literals (RFC 6066, section 3).
            if (!is_ip_literal(o.host) && !SSL_set_tlsext_host_name(native, o.host.c_str()))
                co_return error(errc::invalid_argument, what + ": cannot set SNI");
            conn->tls->set_verify_mode(ssl::verify_peer);
            // Chain check by OpenSSL, then the name check of asio; a name
            // mismatch is recorded so the error says so.
            bool const ip = is_ip_literal(o.host);
            conn->tls->set_verify_callback(
                [check = ssl::host_name_verification(o.host), ip](bool preverified, ssl::verify_context& ctx) mutable {
                    bool const ok = check(preverified, ctx);
                    if (preverified && !ok)
                        X509_STORE_CTX_set_error(ctx.native_handle(),
                                                 ip ? X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH);
                    return ok;
                });
        } else {
            conn->plain.emplace(conn->strand);
        }
        conn->set_deadline(opts.connect_timeout);
        auto [cec, ep] = co_await conn->lowest().async_connect(endpoints, asio::as_tuple(asio::use_awaitable));
        if (cec) co_return io_error(cec, cs, what);
        conn->lowest().socket().set_option(tcp::no_delay(true));
        if (o.tls) {
            auto [hec] =
                co_await conn->tls->async_handshake(ssl::stream_base::client, asio::as_tuple(asio::use_awaitable));
            if (hec) {
                if (cancelled(cs)) co_return error(errc::cancelled, what + ": cancelled");
                if (hec == beast::error::timeout)
                    co_return error(errc::timed_out, what + ": TLS handshake deadline passed");
                // Certificate problems land here; the peer is refused, never retried unverified.
                auto const verify = SSL_get_verify_result(conn->tls->native_handle());
                std::string detail = hec.message();
                if (verify != X509_V_OK)
                    detail += std::string(" (certificate: ") + X509_verify_cert_error_string(verify) + ")";
                co_return error(hec, what + ": TLS handshake failed: " + detail);
            }
        }
        opened.fetch_add(1);
        co_return conn;
    }

    /// A slot of the origin's pool plus an idle or new connection.
    asio::awaitable<result<lease>> acquire(origin const& o, bool fresh)
    {
        lease l;
        l.pool = pool_for(o);
        auto permit = co_await l.pool->slots->acquire();
        if (!permit) co_return permit.error();
        l.permit = std::move(*permit);
        if (!fresh) {
            if (auto c = l.pool->take_idle(opts.pool_idle_timeout)) {
                reused.fetch_add(1);
                l.conn = std::move(c);
                co_return l;
            }
        }
        auto c = co_await connect(o);
        if (!c) co_return c.error();
        l.pool->opened();
        l.conn = std::move(*c);
        co_return l;
    }

    template <class Stream>
    static asio::awaitable<result<http_response>> exchange(Stream& s, connection& c,
                                                           http::request<http::string_body> const& req,
                                                           std::size_t limit, bool& got_bytes, bool& keep_alive,
                                                           std::string what)
    {
        auto cs = co_await asio::this_coro::cancellation_state;
        auto [wec, wn] = co_await http::async_write(s, req, asio::as_tuple(asio::use_awaitable));
        if (wec) co_return io_error(wec, cs, what);
        http::response_parser<http::string_body> p;
        p.body_limit(limit);
        auto [rec, rn] = co_await http::async_read(s, c.buffer, p, asio::as_tuple(asio::use_awaitable));
        got_bytes = rn > 0 || p.got_some();
        if (rec) co_return io_error(rec, cs, what);
        auto& msg = p.get();
        keep_alive = msg.keep_alive();
        http_response out;
        out.status = static_cast<int>(msg.result_int());
        out.headers = from_beast(msg.base());
        out.body = std::move(msg.body());
        co_return out;
    }

    asio::awaitable<result<http_response>> request_once(origin o, http_request req, std::chrono::milliseconds timeout,
                                                        bool fresh, bool& retry_fresh)
    {
        auto l = co_await acquire(o, fresh);
        if (!l) co_return l.error();
        auto conn = l->conn;
        auto const breq = to_beast(o, req);
        std::string const what = req.method + " " + o.key() + path_of(o.base_path + req.target);
        bool got_bytes = false, keep_alive = false;
        auto body = [&]() -> asio::awaitable<result<http_response>> {
            conn->set_deadline(timeout);
            if (conn->tls)
                co_return co_await exchange(*conn->tls, *conn, breq, opts.max_response_bytes, got_bytes, keep_alive,
                                            what);
            co_return co_await exchange(*conn->plain, *conn, breq, opts.max_response_bytes, got_bytes, keep_alive,
                                        what);
        };
        auto r = co_await on_strand(conn->strand, body());
        if (!r) {
            // A pooled connection the server closed while idle fails before any
            // response byte: replay once on a new connection.
            retry_fresh = conn->reused && !got_bytes && is_stale_connection_error(r.error().code());
            co_return r;
        }
        l->reusable = keep_alive;
        co_return r;
    }

    void log_line(std::string const& method, origin const& o, std::string const& target, int status,
                  std::chrono::steady_clock::time_point start, std::string_view extra)
    {
        if (!opts.logger) return;
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
        std::string line = method + " " + o.key() + path_of(o.base_path + target) + " " +
                           (status ? std::to_string(status) : std::string("-")) + " " + std::to_string(ms.count()) +
                           "ms";
        if (!extra.empty()) {
            line += " ";
            line += extra;
        }
        log_redacted(opts.logger, status >= 400 || status == 0 ? log_level::warning : log_level::info, line);
    }
};

// ---- streamed responses -----------------------------------------------------

namespace {

template <class Stream>
class stream_impl final : public http_stream {
public:
    stream_impl(lease l, Stream& s) : lease_(std::move(l)), stream_(s) {}
    ~stream_impl() override = default;  // the lease closes or pools the connection

    asio::awaitable<result<void>> start(http::request<http::string_body> const& req, std::chrono::milliseconds timeout,
                                        std::string what, bool& got_bytes)
    {
        auto cs = co_await asio::this_coro::cancellation_state;
        what_ = std::move(what);
        auto& c = *lease_.conn;
        c.set_deadline(timeout);
        auto [wec, wn] = co_await http::async_write(stream_, req, asio::as_tuple(asio::use_awaitable));
        if (wec) co_return io_error(wec, cs, what_);
        parser_.body_limit(boost::none);  // the envelope decoder bounds messages
        auto [rec, rn] =
            co_await http::async_read_header(stream_, c.buffer, parser_, asio::as_tuple(asio::use_awaitable));
        got_bytes = rn > 0 || parser_.got_some();
        if (rec) co_return io_error(rec, cs, what_);
        status_ = static_cast<int>(parser_.get().result_int());
        headers_ = from_beast(parser_.get().base());
        keep_alive_ = parser_.get().keep_alive();
        if (parser_.is_done()) finish();
        co_return result<void>{};
    }

    int status() const noexcept override { return status_; }
    header_list const& headers() const noexcept override { return headers_; }
    bool done() const noexcept override { return done_; }

    asio::awaitable<result<std::string>> read_some(std::chrono::milliseconds idle_timeout) override
    {
        if (done_) co_return std::string{};
        if (closed_ || !lease_.conn) co_return error(errc::cancelled, what_ + ": stream closed");
        auto strand = lease_.conn->strand;
        co_return co_await on_strand(strand, read_on_strand(idle_timeout));
    }

    void close() noexcept override
    {
        std::lock_guard lock(mutex_);
        closed_ = true;  // before anything else: finish() will not pool the connection
        if (auto c = lease_.conn) {
            asio::dispatch(c->strand, [c] { c->close_now(); });
        }
    }

private:
    asio::awaitable<result<std::string>> read_on_strand(std::chrono::milliseconds idle_timeout)
    {
        auto cs = co_await asio::this_coro::cancellation_state;
        auto& c = *lease_.conn;
        std::string out;
        while (out.empty() && !done_) {
            if (closed_) co_return error(errc::cancelled, what_ + ": stream closed");
            char buf[16384];
            parser_.get().body().data = buf;
            parser_.get().body().size = sizeof buf;
            c.set_deadline(idle_timeout);
            auto [ec, n] =
                co_await http::async_read_some(stream_, c.buffer, parser_, asio::as_tuple(asio::use_awaitable));
            if (ec == http::error::need_buffer) ec = {};
            out.append(buf, sizeof buf - parser_.get().body().size);
            if (ec) {
                lease_.reusable = false;
                if (closed_) co_return error(errc::cancelled, what_ + ": stream closed");
                co_return io_error(ec, cs, what_);
            }
            if (parser_.is_done()) finish();
        }
        co_return out;
    }

    void finish()
    {
        std::lock_guard lock(mutex_);
        done_ = true;
        lease_.reusable = keep_alive_ && !closed_;
        lease_.reset();  // back to the pool now, not when the consumer lets go
    }

    lease lease_;
    Stream& stream_;
    http::response_parser<http::buffer_body> parser_;
    std::string what_;
    int status_ = 0;
    header_list headers_;
    bool keep_alive_ = false;
    bool done_ = false;
    std::atomic<bool> closed_{false};
    std::mutex mutex_;  // guards lease_.conn between close() (any thread) and finish() (the strand)
};

}  // namespace

// ---- public members ---------------------------------------------------------

http_transport::http_transport(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
http_transport::~http_transport() = default;

result<std::shared_ptr<http_transport>> http_transport::create(asio::any_io_executor ex, transport_options opts)
{
    auto p = std::make_unique<impl>(std::move(ex), std::move(opts));
    error_code ec;
    p->ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                           ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                       ec);
    p->ctx.set_default_verify_paths(ec);
    if (ec) return error(errc::invalid_argument, "cannot load the system trust store: " + ec.message());
    if (p->opts.ca_file) {
        p->ctx.load_verify_file(*p->opts.ca_file, ec);
        if (ec) return error(errc::invalid_argument, "cannot load CA file '" + *p->opts.ca_file + "': " + ec.message());
    }
    p->ctx.set_verify_mode(ssl::verify_peer);
    return std::shared_ptr<http_transport>(new http_transport(std::move(p)));
}

asio::awaitable<result<http_response>> http_transport::request(origin o, http_request req,
                                                               std::chrono::milliseconds timeout)
{
    if (auto why = invalid_request(req)) co_return error(errc::invalid_argument, *why);
    auto const start = std::chrono::steady_clock::now();
    impl_->requests.fetch_add(1);
    result<http_response> r = error(errc::cancelled, "not started");
    try {
        bool retry_fresh = false;
        r = co_await impl_->request_once(o, req, timeout, false, retry_fresh);
        if (!r && retry_fresh) {
            retry_fresh = false;
            r = co_await impl_->request_once(o, req, timeout, true, retry_fresh);
        }
    } catch (boost::system::system_error const& e) {
        // A coroutine cancelled before it suspends throws operation_aborted.
        if (e.code() != asio::error::operation_aborted) throw;
        r = error(errc::cancelled, req.method + " " + path_of(req.target) + ": cancelled");
    }
    impl_->log_line(req.method, o, req.target, r ? r->status : 0, start,
                    r ? std::string_view{} : std::string_view(r.error().code().message()));
    co_return r;
}

asio::awaitable<result<std::unique_ptr<http_stream>>> http_transport::open_stream(origin o, http_request req,
                                                                                  std::chrono::milliseconds timeout)
{
    if (auto why = invalid_request(req)) co_return error(errc::invalid_argument, *why);
    auto const start = std::chrono::steady_clock::now();
    impl_->requests.fetch_add(1);
    auto const breq = to_beast(o, req);
    std::string const what = req.method + " " + o.key() + path_of(o.base_path + req.target);
    result<std::unique_ptr<http_stream>> out = error(errc::cancelled, "not started");
    try {
        for (int attempt = 0; attempt < 2; ++attempt) {
            auto l = co_await impl_->acquire(o, attempt > 0);
            if (!l) {
                out = l.error();
                break;
            }
            auto conn = l->conn;
            bool got_bytes = false;
            result<void> started;
            std::unique_ptr<http_stream> s;
            if (conn->tls) {
                auto p = std::make_unique<stream_impl<beast::ssl_stream<beast::tcp_stream>>>(std::move(*l), *conn->tls);
                started = co_await on_strand(conn->strand, p->start(breq, timeout, what, got_bytes));
                s = std::move(p);
            } else {
                auto p = std::make_unique<stream_impl<beast::tcp_stream>>(std::move(*l), *conn->plain);
                started = co_await on_strand(conn->strand, p->start(breq, timeout, what, got_bytes));
                s = std::move(p);
            }
            if (started) {
                out = std::move(s);
                break;
            }
            out = started.error();
            if (!(conn->reused && !got_bytes && is_stale_connection_error(started.error().code()))) break;
        }
    } catch (boost::system::system_error const& e) {
        if (e.code() != asio::error::operation_aborted) throw;
        out = error(errc::cancelled, what + ": cancelled");
    }
    impl_->log_line(req.method, o, req.target, out ? (*out)->status() : 0, start,
                    out ? std::string_view("stream") : std::string_view(out.error().code().message()));
    co_return out;
}

transport_stats http_transport::stats() const
{
    return {impl_->opened.load(), impl_->reused.load(), impl_->requests.load()};
}

std::size_t http_transport::open_connections(origin const& o) const
{
    std::shared_ptr<origin_pool> p;
    {
        std::lock_guard lock(impl_->mutex);
        auto it = impl_->pools.find(o.key());
        if (it == impl_->pools.end()) return 0;
        p = it->second;
    }
    std::lock_guard lock(p->mutex);
    return p->open;
}

}  // namespace prism_e2b::wire
