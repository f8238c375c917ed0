// Beast-based HTTP/1.1 server: keep-alive sessions, chunked request bodies,
// per-route body limits, chunked streaming responses and Server-Timing; and what
// keeps hostile clients small: the head judged before the body is read, a shared
// byte budget for bodies, a connection cap, accept backoff when descriptors run
// out, header and idle timeouts.
#include "emulator/http_listener.hpp"

#include "emulator/h2_connection.hpp"
#include "emulator/request_reader.hpp"
#include "emulator/use_nothrow.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <map>
#include <mutex>
#include <openssl/ssl.h>
#include <optional>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

std::string url_decode(std::string_view s, bool plus_is_space)
{
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
            i += 2;
        } else if (plus_is_space && s[i] == '+') {
            out.push_back(' ');
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

std::string server_timing(std::chrono::steady_clock::time_point since)
{
    auto const us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - since).count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "app;dur=%.3f", static_cast<double>(us) / 1000.0);
    return buf;
}

namespace {

/// The sink of one HTTP/1.1 request on `Stream` (beast::tcp_stream, or TLS over one).
template <class Stream>
class beast_sink final : public response_sink {
public:
    beast_sink(Stream& stream, http_request const& req, bool keep_alive, unsigned version)
        : stream_(stream), received_(req.received), keep_alive_(keep_alive), version_(version), head_(req.head)
    {
    }

    asio::awaitable<bool> send(http_response r) override
    {
        if (responded_ || broken_) co_return false;
        responded_ = true;
        http::response<http::string_body> res{static_cast<http::status>(r.status), version_};
        res.set(http::field::server, "prism-e2b-local");
        if (!r.content_type.empty() && !(r.body.empty() && r.status == 204))
            res.set(http::field::content_type, r.content_type);
        for (auto& [n, v] : r.headers) res.insert(n, v);
        res.set("Server-Timing", server_timing(received_));
        res.keep_alive(keep_alive_);
        res.body() = std::move(r.body);
        res.prepare_payload();
        lowest().expires_after(std::chrono::seconds(60));
        // A HEAD is answered with the GET's head (its Content-Length too) and no body.
        http::response_serializer<http::string_body> sr{res};
        auto [ec, n] = head_ ? co_await http::async_write_header(stream_, sr, use_nothrow)
                             : co_await http::async_write(stream_, sr, use_nothrow);
        if (ec) {
            broken_ = true;
            co_return false;
        }
        co_return true;
    }

    asio::awaitable<bool> begin_stream(int status, std::string content_type, header_list headers) override
    {
        if (responded_ || broken_) co_return false;
        responded_ = true;
        streaming_ = true;
        http::response<http::empty_body> res{static_cast<http::status>(status), version_};
        res.set(http::field::server, "prism-e2b-local");
        res.set(http::field::content_type, content_type);
        for (auto& [n, v] : headers) res.insert(n, v);
        res.set("Server-Timing", server_timing(received_));
        res.keep_alive(keep_alive_);
        res.chunked(true);
        http::response_serializer<http::empty_body> sr{res};
        lowest().expires_after(std::chrono::seconds(60));
        auto [ec, n] = co_await http::async_write_header(stream_, sr, use_nothrow);
        if (ec) {
            broken_ = true;
            co_return false;
        }
        co_return true;
    }

    asio::awaitable<bool> write_chunk(std::string data) override
    {
        if (!streaming_ || broken_) co_return false;
        if (data.empty() || head_) co_return true;
        lowest().expires_after(std::chrono::seconds(60));
        auto [ec, n] = co_await asio::async_write(stream_, http::make_chunk(asio::buffer(data)), use_nothrow);
        if (ec) {
            broken_ = true;
            co_return false;
        }
        co_return true;
    }

    asio::awaitable<bool> finish_stream() override
    {
        if (!streaming_ || broken_) co_return false;
        streaming_ = false;
        if (head_) co_return true;
        lowest().expires_after(std::chrono::seconds(60));
        auto [ec, n] = co_await asio::async_write(stream_, http::make_chunk_last(), use_nothrow);
        if (ec) {
            broken_ = true;
            co_return false;
        }
        co_return true;
    }

    void abort() override
    {
        broken_ = true;
        beast::error_code ec;
        lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
        lowest().socket().close(ec);
    }

    bool responded() const noexcept override { return responded_; }

    asio::awaitable<void> wait_peer_closed() override
    {
        // A waiting HTTP/1.1 client sends nothing, so readable means closed (or pipelined data, which we leave alone).
        for (;;) {
            auto [ec] = co_await lowest().socket().async_wait(tcp::socket::wait_read, use_nothrow);
            if (ec == asio::error::operation_aborted) co_return;  // cancelled: the stream ended first
            char c;
            ssize_t const n = ::recv(lowest().socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
            if (ec || n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
                broken_ = true;
                co_return;
            }
            if (n > 0) {
                asio::steady_timer forever(co_await asio::this_coro::executor,
                                           std::chrono::steady_clock::time_point::max());
                co_await forever.async_wait(use_nothrow);  // pipelined request: nothing to watch
                co_return;
            }
        }
    }
    bool broken() const noexcept { return broken_ || streaming_; }

private:
    beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

    Stream& stream_;
    std::chrono::steady_clock::time_point received_;
    bool keep_alive_;
    unsigned version_;
    bool head_;  ///< a HEAD request: heads only, never a body
    bool responded_ = false;
    bool streaming_ = false;
    bool broken_ = false;
};

/// Request-body bytes held by all sessions together, with a hard ceiling.
class byte_budget {
public:
    explicit byte_budget(std::size_t limit) : limit_(limit) {}
    bool try_reserve(std::size_t n) noexcept
    {
        std::size_t cur = used_.load();
        do {
            if (n > limit_ - cur) return false;
        } while (!used_.compare_exchange_weak(cur, cur + n));
        std::size_t peak = peak_.load();
        while (cur + n > peak && !peak_.compare_exchange_weak(peak, cur + n)) {
        }
        return true;
    }
    void release(std::size_t n) noexcept { used_.fetch_sub(n); }
    std::size_t used() const noexcept { return used_.load(); }
    std::size_t peak() const noexcept { return peak_.load(); }

private:
    std::size_t const limit_;
    std::atomic<std::size_t> used_{0};
    std::atomic<std::size_t> peak_{0};
};

/// The bytes one request holds in a byte_budget, returned when it goes.
class reservation {
public:
    explicit reservation(byte_budget& b) : budget_(b) {}
    reservation(reservation const&) = delete;
    reservation& operator=(reservation const&) = delete;
    ~reservation() { budget_.release(held_); }
    /// Grows what is held to `total` bytes; false (nothing changed) when the budget has no room.
    bool hold(std::size_t total) noexcept
    {
        if (total <= held_) return true;
        if (!budget_.try_reserve(total - held_)) return false;
        held_ = total;
        return true;
    }

private:
    byte_budget& budget_;
    std::size_t held_ = 0;
};

/// A refused request announcing at most this much body keeps its connection (the body is dropped unread).
constexpr std::uint64_t small_refused_body = 64 * 1024;

bool out_of_descriptors(boost::system::error_code const& ec)
{
    return ec == boost::system::errc::too_many_files_open || ec == boost::system::errc::too_many_files_open_in_system ||
           ec == boost::system::errc::no_buffer_space || ec == boost::system::errc::not_enough_memory;
}

}  // namespace

struct http_listener::impl : std::enable_shared_from_this<impl> {
    asio::any_io_executor ex_;
    request_handler handler_;
    head_check_fn check_;
    listener_limits limits_;
    log_sink logger_;
    tcp::acceptor acceptor_;
    asio::steady_timer backoff_;  ///< on the acceptor's strand
    byte_budget budget_;
    mutable std::mutex mutex_;
    /// An open connection, and since when it waits for the first byte of a request
    /// (nullopt: a request is under way, or it speaks HTTP/2 or is in its TLS handshake).
    struct session_entry {
        std::shared_ptr<beast::tcp_stream> stream;
        std::optional<std::chrono::steady_clock::time_point> idle_since;
    };
    std::map<beast::tcp_stream const*, session_entry> sessions_;
    std::atomic<std::size_t> refusing_{0};  ///< connections being answered 503 at the cap
    std::atomic<std::uint64_t> refused_{0};
    std::atomic<std::uint64_t> backoffs_{0};
    std::atomic<std::uint64_t> shed_{0};
    bool stopped_ = false;
    std::optional<asio::ssl::context> tls_;  ///< set by start() when limits_ name a certificate

    impl(asio::any_io_executor ex, request_handler h, head_check_fn c, listener_limits l, log_sink logger)
        : ex_(ex),
          handler_(std::move(h)),
          check_(std::move(c)),
          limits_(l),
          logger_(std::move(logger)),
          acceptor_(asio::make_strand(ex)),
          backoff_(acceptor_.get_executor()),
          budget_(l.max_buffered_bytes)
    {
    }

    asio::awaitable<void> accept_loop()
    {
        auto self = shared_from_this();
        constexpr auto first_backoff = std::chrono::milliseconds(10);
        auto backoff = first_backoff;
        for (;;) {
            auto [ec, sock] = co_await acceptor_.async_accept(asio::make_strand(ex_), use_nothrow);
            if (ec) {
                if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
                if (!out_of_descriptors(ec)) continue;  // e.g. ECONNABORTED: that client is gone
                // Idle connections must not lock out the ones that have something to ask:
                // the longest idle go first, and the next accept comes soon.
                if (shed_idle() > 0) backoff = first_backoff;
                // The connection stays in the backlog and the acceptor stays readable: retrying
                // at once would spin. Wait (doubling, at most 500 ms) for descriptors to free up.
                ++backoffs_;
                backoff_.expires_after(backoff);
                co_await backoff_.async_wait(use_nothrow);
                backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
                continue;
            }
            backoff = first_backoff;
            beast::error_code ignored;
            sock.set_option(tcp::no_delay(true), ignored);
            auto stream = std::make_shared<beast::tcp_stream>(std::move(sock));
            bool at_cap = false;
            {
                std::lock_guard lk(mutex_);
                if (stopped_) {
                    stream->socket().close(ignored);
                    co_return;
                }
                at_cap = sessions_.size() >= limits_.max_connections;
                if (!at_cap) sessions_.emplace(stream.get(), session_entry{stream, std::nullopt});
            }
            auto exec = stream->get_executor();
            if (!at_cap) {
                if (tls_)
                    asio::co_spawn(exec, tls_session(stream), asio::detached);
                else
                    asio::co_spawn(exec, session(stream), asio::detached);
            } else if (refusing_.fetch_add(1) < 64) {
                ++refused_;
                asio::co_spawn(exec, refuse_connection(stream), asio::detached);
            } else {
                --refusing_;  // a flood: do not even answer
                ++refused_;
                stream->socket().close(ignored);
            }
        }
    }

    /// Out of descriptors: closes the connections that have waited longest for a request
    /// (at most shed_batch, so a backlog of idle ones is worked through quickly). Returns
    /// how many. Their sessions end and free the descriptors on their own strands.
    std::size_t shed_idle()
    {
        constexpr std::size_t shed_batch = 16;
        std::vector<std::pair<std::chrono::steady_clock::time_point, std::shared_ptr<beast::tcp_stream>>> idle;
        {
            std::lock_guard lk(mutex_);
            for (auto& [key, e] : sessions_)
                if (e.idle_since) idle.emplace_back(*e.idle_since, e.stream);
            auto const n = std::min(shed_batch, idle.size());
            std::partial_sort(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(n), idle.end(),
                              [](auto const& a, auto const& b) { return a.first < b.first; });
            idle.resize(n);
            for (auto const& [since, s] : idle) sessions_.at(s.get()).idle_since.reset();  // shed once
        }
        for (auto const& entry : idle)  // not a structured binding: clang 14 cannot capture one
            asio::post(entry.second->get_executor(), [s = entry.second] {
                beast::error_code ec;
                s->socket().shutdown(tcp::socket::shutdown_both, ec);
                s->socket().close(ec);
            });
        shed_ += idle.size();
        return idle.size();
    }

    /// Marks the session of `stream` as waiting for a request's first byte (or no longer).
    void set_idle(beast::tcp_stream const& stream, bool idle)
    {
        std::lock_guard lk(mutex_);
        if (auto it = sessions_.find(&stream); it != sessions_.end())
            it->second.idle_since = idle ? std::optional(std::chrono::steady_clock::now()) : std::nullopt;
    }

    /// Past max_connections: 503, then close (briefly draining what the client sent, so it reads the answer).
    asio::awaitable<void> refuse_connection(std::shared_ptr<beast::tcp_stream> stream)
    {
        auto self = shared_from_this();
        co_await answer_plain(*stream, http::status::service_unavailable, "too many connections", true);
        co_await linger(*stream, std::chrono::seconds(1));
        beast::error_code ec;
        stream->socket().close(ec);
        --refusing_;
    }

    /// `msg` is a literal (a string_view: nothing to destroy across the coroutine frame).
    template <class Stream>
    asio::awaitable<void> answer_plain(Stream& stream, http::status st, std::string_view msg, bool retry_after = false)
    {
        http::response<http::string_body> res{st, 11};
        res.set(http::field::server, "prism-e2b-local");
        res.set(http::field::content_type, "application/json");
        res.set("Server-Timing", "app;dur=0");
        if (retry_after) res.set(http::field::retry_after, "1");
        res.keep_alive(false);
        res.body() = "{\"code\":" + std::to_string(static_cast<int>(st)) + ",\"message\":\"" + std::string(msg) + "\"}";
        res.prepare_payload();
        beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
        co_await http::async_write(stream, res, use_nothrow);
    }

    /// After refusing a request early, keep reading (and dropping: nothing is buffered)
    /// what the client still sends for a while, so it can finish writing and read the answer.
    template <class Stream>
    asio::awaitable<void> linger(Stream& stream, std::chrono::seconds for_at_most = std::chrono::seconds(5))
    {
        beast::error_code ec;
        beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ec);
        std::array<char, 64 * 1024> sink;
        std::size_t total = 0;
        auto const until = std::chrono::steady_clock::now() + for_at_most;
        while (total < (256u << 20) && std::chrono::steady_clock::now() < until) {
            beast::get_lowest_layer(stream).expires_at(until);
            auto [rec, n] = co_await stream.async_read_some(asio::buffer(sink), use_nothrow);
            if (rec) break;
            total += n;
        }
    }

    /// Reads and drops `n` body bytes (none is kept), from what was read ahead first.
    template <class Stream>
    asio::awaitable<bool> discard(Stream& stream, beast::flat_buffer& buffer, std::uint64_t n)
    {
        auto const ahead = std::min<std::uint64_t>(n, buffer.size());
        buffer.consume(static_cast<std::size_t>(ahead));
        n -= ahead;
        std::array<char, 16 * 1024> sink;
        while (n > 0) {
            beast::get_lowest_layer(stream).expires_after(limits_.idle_timeout);
            auto const want = static_cast<std::size_t>(std::min<std::uint64_t>(n, sink.size()));
            auto [ec, got] = co_await stream.async_read_some(asio::buffer(sink.data(), want), use_nothrow);
            if (ec) co_return false;
            n -= got;
        }
        co_return true;
    }

    /// Reads the connection's first bytes into `buffer`; true when they are the HTTP/2 preface.
    asio::awaitable<bool> starts_h2(beast::tcp_stream& stream, beast::flat_buffer& buffer)
    {
        while (buffer.size() < h2_preface.size()) {
            std::string_view const got(static_cast<char const*>(buffer.data().data()), buffer.size());
            if (!h2_preface.starts_with(got)) co_return false;
            // A new connection that sends nothing holds a descriptor: it gets the shorter of
            // the two timeouts, and may be shed while it waits.
            bool const fresh = buffer.size() == 0;
            stream.expires_after(fresh ? std::min(limits_.idle_timeout, limits_.header_timeout)
                                       : limits_.header_timeout);
            if (fresh) set_idle(stream, true);
            auto [ec, n] = co_await stream.async_read_some(buffer.prepare(16 * 1024), use_nothrow);
            if (fresh) set_idle(stream, false);
            if (ec) co_return false;  // the HTTP/1.1 loop below sees the empty or partial buffer and ends
            buffer.commit(n);
        }
        co_return std::string_view(static_cast<char const*>(buffer.data().data()), h2_preface.size()) == h2_preface;
    }

    h2_serve_options h2_options()
    {
        h2_serve_options o;
        o.handler = handler_;
        o.check = check_;
        o.idle_timeout = limits_.idle_timeout;
        o.logger = logger_;
        o.try_reserve = [self = shared_from_this()](std::size_t n) { return self->budget_.try_reserve(n); };
        o.release = [self = shared_from_this()](std::size_t n) { self->budget_.release(n); };
        return o;
    }

    /// HTTP/1.1 keep-alive requests on `stream` (plain or TLS) until the peer or an error ends them.
    template <class Stream>
    asio::awaitable<void> http1(Stream& stream, beast::flat_buffer& buffer)
    {
        auto& stream_lowest = beast::get_lowest_layer(stream);
        for (;;) {
            // Idle: wait for the first byte of the next request (idle_timeout), then the
            // whole head must arrive within header_timeout.
            if (buffer.size() == 0) {
                stream_lowest.expires_after(limits_.idle_timeout);
                set_idle(stream_lowest, true);  // a keep-alive connection between requests: may be shed
                auto [ec, n] = co_await stream.async_read_some(buffer.prepare(16 * 1024), use_nothrow);
                set_idle(stream_lowest, false);
                if (ec) break;
                buffer.commit(n);
            }
            http::request_parser<http::string_body> parser;
            parser.header_limit(request_header_limit);
            parser.body_limit(boost::none);  // the route's limit is applied once the head is known
            stream_lowest.expires_after(limits_.header_timeout);
            auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, use_nothrow);
            if (ec) {
                if (ec == http::error::header_limit || ec == http::error::bad_target || ec == http::error::bad_method ||
                    ec == http::error::bad_version || ec == http::error::bad_field || ec == http::error::bad_value)
                    co_await answer_plain(stream, http::status::bad_request, "malformed request");
                break;
            }
            http_request req = request_from_head(parser.get());
            unsigned const version = parser.get().version();
            // Credentials and limits from the head alone: a refused body is never read.
            head_verdict verdict = check_ ? check_(req) : head_verdict{};
            if (verdict.refuse) {
                // A small announced body is read and dropped so the connection stays
                // usable; anything else (large, chunked, 100-continue) ends it.
                auto const announced = parser.content_length().value_or(0);
                bool const reusable = !parser.chunked() && announced <= small_refused_body &&
                                      parser.get().keep_alive() && parser.get()[http::field::expect].empty();
                req.received = std::chrono::steady_clock::now();
                beast_sink sink(stream, req, reusable, version);
                co_await sink.send(std::move(*verdict.refuse));
                if (!reusable || sink.broken()) {
                    co_await linger(stream);
                    break;
                }
                if (!co_await discard(stream, buffer, announced)) break;
                continue;
            }
            std::size_t const limit = verdict.body_limit;
            auto const len = parser.content_length();
            // Content-Length beyond the limit: answer before reading the body.
            if (len && *len > limit) {
                co_await answer_plain(stream, http::status::payload_too_large, "request body too large");
                co_await linger(stream);
                break;
            }
            reservation held(budget_);
            if (len && !held.hold(static_cast<std::size_t>(*len))) {
                co_await answer_plain(stream, http::status::service_unavailable,
                                      "server busy: too many request bytes in flight", true);
                co_await linger(stream);
                break;
            }
            parser.body_limit(limit);  // enforced while a chunked body arrives
            if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
                static constexpr std::string_view cont = "HTTP/1.1 100 Continue\r\n\r\n";
                co_await asio::async_write(stream, asio::buffer(cont), use_nothrow);
            }
            beast::error_code ec2;
            bool over_budget = false;
            while (!parser.is_done()) {
                stream_lowest.expires_after(limits_.idle_timeout);  // a body that stops arriving
                auto [rec, rn] = co_await http::async_read_some(stream, buffer, parser, use_nothrow);
                if (rec) {
                    ec2 = rec;
                    break;
                }
                if (!held.hold(parser.get().body().size())) {  // a chunked body outgrowing the budget
                    over_budget = true;
                    break;
                }
            }
            if (over_budget) {
                co_await answer_plain(stream, http::status::service_unavailable,
                                      "server busy: too many request bytes in flight", true);
                co_await linger(stream);
                break;
            }
            if (ec2) {
                if (ec2 == http::error::body_limit) {
                    co_await answer_plain(stream, http::status::payload_too_large, "request body too large");
                    co_await linger(stream);
                } else if (ec2 != http::error::end_of_stream && ec2 != asio::error::eof &&
                           ec2 != asio::error::operation_aborted && ec2 != beast::error::timeout &&
                           ec2 != asio::error::connection_reset)
                    co_await answer_plain(stream, http::status::bad_request, "malformed request");
                break;
            }
            auto msg = parser.release();
            req.received = std::chrono::steady_clock::now();
            req.body = std::move(msg.body());
            bool const keep_alive = msg.keep_alive();
            beast_sink sink(stream, req, keep_alive, version);
            stream_lowest.expires_never();
            try {
                co_await handler_(std::move(req), sink);
            } catch (std::exception const& e) {
                log_redacted(logger_, log_level::error, std::string("prism-e2b-local: handler failed: ") + e.what());
                if (sink.responded()) {
                    sink.abort();
                    break;
                }
            }
            if (!sink.responded()) {
                http_response r;
                r.status = 500;
                r.body = R"({"code":500,"message":"internal error"})";
                co_await sink.send(std::move(r));
            }
            if (sink.broken() || !keep_alive) break;
        }
    }

    /// A TLS connection: the handshake under header_timeout, then HTTP/2 when ALPN chose h2, else HTTP/1.1.
    asio::awaitable<void> tls_session(std::shared_ptr<beast::tcp_stream> stream)
    {
        auto self = shared_from_this();
        try {
            asio::ssl::stream<beast::tcp_stream&> tls(*stream, *tls_);
            stream->expires_after(limits_.header_timeout);
            auto [hec] = co_await tls.async_handshake(asio::ssl::stream_base::server, use_nothrow);
            if (!hec) {
                unsigned char const* proto = nullptr;
                unsigned len = 0;
                SSL_get0_alpn_selected(tls.native_handle(), &proto, &len);
                if (proto && std::string_view(reinterpret_cast<char const*>(proto), len) == "h2") {
                    std::string none;  // named: g++ 12 must not see temporaries inside co_await
                    auto const o = h2_options();
                    co_await serve_h2(tls, std::move(none), o);
                } else {
                    beast::flat_buffer buffer;
                    co_await http1(tls, buffer);
                }
            }
        } catch (std::exception const& e) {
            log_redacted(logger_, log_level::warning, std::string("prism-e2b-local: session error: ") + e.what());
        }
        end_session(stream);
    }

    void end_session(std::shared_ptr<beast::tcp_stream> const& stream)
    {
        beast::error_code ec;
        stream->socket().shutdown(tcp::socket::shutdown_send, ec);
        stream->socket().close(ec);
        std::lock_guard lk(mutex_);
        sessions_.erase(stream.get());
    }

    /// One connection: HTTP/2 when it opens with the preface (h2c), else HTTP/1.1.
    asio::awaitable<void> session(std::shared_ptr<beast::tcp_stream> stream)
    {
        auto self = shared_from_this();
        beast::flat_buffer buffer;
        try {
            if (co_await starts_h2(*stream, buffer)) {
                // h2c with prior knowledge: the connection speaks HTTP/2 from its first byte.
                std::string initial(static_cast<char const*>(buffer.data().data()), buffer.size());
                buffer.consume(buffer.size());
                auto const o = h2_options();
                co_await serve_h2(*stream, std::move(initial), o);
            } else {
                co_await http1(*stream, buffer);
            }
        } catch (std::exception const& e) {
            log_redacted(logger_, log_level::warning, std::string("prism-e2b-local: session error: ") + e.what());
        }
        end_session(stream);
    }
};

http_listener::http_listener(asio::any_io_executor ex, request_handler handler, head_check_fn check,
                             listener_limits limits, log_sink logger)
    : impl_(std::make_shared<impl>(ex, std::move(handler), std::move(check), limits, std::move(logger)))
{
}

http_listener::~http_listener() { stop(); }

namespace {

/// ALPN: h2 when the client offers it, else http/1.1, else no protocol (HTTP/1.1).
int select_alpn(SSL*, unsigned char const** out, unsigned char* outlen, unsigned char const* in, unsigned inlen, void*)
{
    static constexpr unsigned char ours[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    unsigned char* chosen = nullptr;
    if (SSL_select_next_proto(&chosen, outlen, ours, sizeof ours, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

}  // namespace

result<void> http_listener::use_tls(std::string const& cert_file, std::string const& key_file)
{
    auto& ctx = impl_->tls_.emplace(asio::ssl::context::tls_server);
    beast::error_code ec;
    ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                        asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1,
                    ec);
    ctx.use_certificate_chain_file(cert_file, ec);
    if (ec) {
        impl_->tls_.reset();
        return error(errc::invalid_argument, "cannot load the TLS certificate '" + cert_file + "': " + ec.message(),
                     {"listen"});
    }
    ctx.use_private_key_file(key_file, asio::ssl::context::pem, ec);
    if (ec) {
        impl_->tls_.reset();
        return error(errc::invalid_argument, "cannot load the TLS key '" + key_file + "': " + ec.message(), {"listen"});
    }
    SSL_CTX_set_alpn_select_cb(ctx.native_handle(), &select_alpn, nullptr);
    return result<void>{};
}

result<std::uint16_t> http_listener::start(std::string const& address, std::uint16_t port)
{
    beast::error_code ec;
    if (!impl_->limits_.tls_cert_file.empty() || !impl_->limits_.tls_key_file.empty()) {
        if (auto ok = use_tls(impl_->limits_.tls_cert_file, impl_->limits_.tls_key_file); !ok) return ok.error();
    }
    auto addr = asio::ip::make_address(address, ec);
    if (ec) return error(errc::invalid_argument, "listen address is not an IP address", {"listen"});
    tcp::endpoint ep(addr, port);
    auto& a = impl_->acceptor_;
    a.open(ep.protocol(), ec);
    if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) a.bind(ep, ec);
    if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return error(ec, "cannot listen on " + address + ":" + std::to_string(port), {"listen"});
    auto const bound = a.local_endpoint(ec).port();
    asio::co_spawn(a.get_executor(), impl_->accept_loop(), asio::detached);
    return bound;
}

result<void> http_listener::adopt(int listening_fd)
{
    // Asio never looks at the address family of an assigned descriptor, and a session
    // uses only stream reads, writes and shutdown, which a Unix stream socket has too
    // (TCP_NODELAY fails on it, and that error is ignored).
    beast::error_code ec;
    impl_->acceptor_.assign(tcp::v4(), listening_fd, ec);
    if (ec) {
        ::close(listening_fd);
        return error(ec, "cannot serve on the inherited socket", {"listen"});
    }
    asio::co_spawn(impl_->acceptor_.get_executor(), impl_->accept_loop(), asio::detached);
    return result<void>{};
}

void http_listener::stop()
{
    auto i = impl_;
    std::vector<std::shared_ptr<beast::tcp_stream>> sessions;
    {
        std::lock_guard lk(i->mutex_);
        if (i->stopped_) return;
        i->stopped_ = true;
        for (auto const& [key, e] : i->sessions_) sessions.push_back(e.stream);
    }
    asio::post(i->acceptor_.get_executor(), [i] {
        beast::error_code ec;
        i->acceptor_.close(ec);
        i->backoff_.cancel();
    });
    for (auto const& s : sessions) {
        asio::post(s->get_executor(), [s] {
            beast::error_code ec;
            s->socket().shutdown(tcp::socket::shutdown_both, ec);
            s->socket().close(ec);
        });
    }
}

listener_stats http_listener::stats() const
{
    listener_stats out;
    {
        std::lock_guard lk(impl_->mutex_);
        out.open_connections = impl_->sessions_.size();
    }
    out.buffered_bytes = impl_->budget_.used();
    out.peak_buffered_bytes = impl_->budget_.peak();
    out.refused_connections = impl_->refused_.load();
    out.accept_backoffs = impl_->backoffs_.load();
    out.shed_connections = impl_->shed_.load();
    return out;
}

}  // namespace prism_e2b::local::detail
