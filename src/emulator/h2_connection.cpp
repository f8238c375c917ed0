#include "emulator/h2_connection.hpp"

#include "emulator/request_reader.hpp"
#include "protocol/ascii_lower.hpp"
#include "protocol/h2_pump.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>

namespace asio = boost::asio;
namespace beast = boost::beast;
using clock_type = std::chrono::steady_clock;

namespace prism_e2b::local::detail {

namespace {

/// A streamed response queues at most this much before write_chunk() waits.
constexpr std::size_t max_queued_response = 256u << 10;
/// Streams one client connection may hold open (SETTINGS_MAX_CONCURRENT_STREAMS): a process
/// stream lasts as long as its process, so 10,000 of them fit in 5 connections.
constexpr std::uint32_t max_concurrent_streams = 2000;

bool connection_specific(std::string_view n)
{
    using beast::iequals;
    return iequals(n, "connection") || iequals(n, "keep-alive") || iequals(n, "transfer-encoding") ||
           iequals(n, "upgrade") || iequals(n, "proxy-connection") || iequals(n, "content-length");
}

/// One request/response. Strand only.
struct h2_srv_stream {
    explicit h2_srv_stream(asio::any_io_executor const& ex)
        : signal(ex, clock_type::time_point::max()), closed_signal(ex, clock_type::time_point::max())
    {
    }
    std::int32_t id = 0;
    http_request req;
    std::size_t body_limit = 0;
    std::size_t held = 0;  ///< body bytes reserved in the listener's budget
    bool judged = false;
    bool refused = false;  ///< answered from its head or over its limit: the body is dropped
    std::string out;       ///< response bytes not yet taken by nghttp2
    std::size_t out_pos = 0;
    bool out_eof = false;
    bool deferred = false;
    bool abort_pending = false;  ///< reset once what was written is sent
    bool closed = false;
    asio::steady_timer signal;         ///< wakes a writer waiting for room
    asio::steady_timer closed_signal;  ///< wakes wait_peer_closed() (which may run beside a writer)
    void wake()
    {
        signal.cancel();
        closed_signal.cancel();
    }
    std::size_t queued() const noexcept { return out.size() - out_pos; }
};

struct h2_server : std::enable_shared_from_this<h2_server> {
    h2_server(asio::any_io_executor ex, h2_serve_options const& o) : strand(ex), opts(o), pump(ex) {}
    asio::any_io_executor strand;
    h2_serve_options opts;
    protocol::h2_pump pump;
    std::map<std::int32_t, std::shared_ptr<h2_srv_stream>> streams;
    std::int32_t first_stream = 0;
    clock_type::time_point last_activity = clock_type::now();
    asio::steady_timer idle_timer{strand};

    static h2_server& of(void* user) { return *static_cast<h2_server*>(user); }
    std::shared_ptr<h2_srv_stream> find(std::int32_t id)
    {
        auto it = streams.find(id);
        return it == streams.end() ? nullptr : it->second;
    }

    static ssize_t read_out(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length, std::uint32_t* flags,
                            nghttp2_data_source* src, void*)
    {
        auto* st = static_cast<h2_srv_stream*>(src->ptr);
        auto const n = std::min(length, st->queued());
        if (n == 0 && st->abort_pending) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // RST_STREAM(INTERNAL_ERROR)
        if (n == 0 && !st->out_eof) {
            st->deferred = true;
            return NGHTTP2_ERR_DEFERRED;
        }
        std::copy_n(st->out.data() + st->out_pos, n, buf);
        st->out_pos += n;
        if (st->out_pos == st->out.size()) {
            st->out.clear();
            st->out_pos = 0;
        }
        if (st->out_eof && st->queued() == 0) *flags |= NGHTTP2_DATA_FLAG_EOF;
        st->wake();
        return static_cast<ssize_t>(n);
    }

    /// Submits a response head; the body comes from st.out (nullptr provider: no body).
    bool submit(h2_srv_stream& st, int status, std::string const& content_type, header_list const& headers,
                bool has_body, std::optional<std::size_t> length)
    {
        std::vector<std::pair<std::string, std::string>> f;
        f.emplace_back(":status", std::to_string(status));
        f.emplace_back("server", "prism-e2b-local");
        if (!content_type.empty()) f.emplace_back("content-type", content_type);
        for (auto const& [n, v] : headers)
            if (!connection_specific(n)) f.emplace_back(protocol::ascii_lower(n), v);
        f.emplace_back("server-timing", server_timing(st.req.received));
        if (length && !status_has_no_body(status)) f.emplace_back("content-length", std::to_string(*length));
        std::vector<nghttp2_nv> nv;
        for (auto const& [n, v] : f)
            nv.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(n.data())),
                          reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data())), n.size(), v.size(),
                          NGHTTP2_NV_FLAG_NONE});
        // No DATA after a HEAD's or a 204/304's headers (END_STREAM on them): a peer treats
        // a body there as a protocol error. A HEAD keeps the GET's content-length.
        if (st.req.head || status_has_no_body(status)) has_body = false;
        nghttp2_data_provider prd{};
        prd.source.ptr = &st;
        prd.read_callback = &read_out;
        int const rv = nghttp2_submit_response(pump.session, st.id, nv.data(), nv.size(), has_body ? &prd : nullptr);
        pump.notify();
        return rv == 0;
    }

    void answer_now(h2_srv_stream& st, http_response r)
    {
        st.refused = true;
        st.out = std::move(r.body);
        st.out_eof = true;
        bool const body = !st.out.empty();
        submit(st, r.status, r.content_type, r.headers, body, st.out.size());
    }

    static int on_begin_headers(nghttp2_session*, nghttp2_frame const* f, void* user)
    {
        auto& self = of(user);
        if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
        auto st = std::make_shared<h2_srv_stream>(self.strand);
        st->id = f->hd.stream_id;
        self.streams.emplace(st->id, st);
        return 0;
    }

    static int on_header(nghttp2_session*, nghttp2_frame const* f, std::uint8_t const* name, std::size_t namelen,
                         std::uint8_t const* value, std::size_t valuelen, std::uint8_t, void* user)
    {
        auto st = of(user).find(f->hd.stream_id);
        if (!st || st->judged) return 0;
        std::string n(reinterpret_cast<char const*>(name), namelen);
        std::string v(reinterpret_cast<char const*>(value), valuelen);
        if (n == ":method")
            st->req.set_method(std::move(v));
        else if (n == ":path")
            st->req.target = std::move(v);
        else if (n == ":authority")
            st->req.headers.emplace_back("host", std::move(v));
        else if (!n.starts_with(':'))
            st->req.headers.emplace_back(std::move(n), std::move(v));
        return 0;
    }

    static int on_frame_recv(nghttp2_session*, nghttp2_frame const* f, void* user)
    {
        auto& self = of(user);
        self.last_activity = clock_type::now();
        auto st = self.find(f->hd.stream_id);
        if (!st) return 0;
        if (f->hd.type == NGHTTP2_HEADERS && !st->judged) self.judge(*st);
        if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && (f->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
            !st->refused) {
            st->req.received = clock_type::now();
            // Started after nghttp2 returns (post, not dispatch): a handler never runs inside a callback.
            asio::post(self.strand, [self = self.shared_from_this(), st] {
                asio::co_spawn(self->strand, run_handler(self, st), asio::detached);
            });
        }
        return 0;
    }

    /// The head-first check, as HTTP/1.1: credentials and the route's body limit.
    void judge(h2_srv_stream& st)
    {
        st.judged = true;
        st.req.path = request_path(st.req.target);
        if (auto const q = st.req.target.find('?'); q != std::string::npos) st.req.query = st.req.target.substr(q + 1);
        if (!first_stream) {
            first_stream = st.id;
            if (opts.faults.goaway_after_first_request) {
                nghttp2_submit_goaway(pump.session, NGHTTP2_FLAG_NONE, st.id, NGHTTP2_NO_ERROR, nullptr, 0);
                pump.notify();
            }
        }
        head_verdict verdict = opts.check ? opts.check(st.req) : head_verdict{};
        st.req.received = clock_type::now();
        if (verdict.refuse) {
            answer_now(st, std::move(*verdict.refuse));
            return;
        }
        st.body_limit = verdict.body_limit;
        auto const len = st.req.header("content-length");
        if (!len.empty()) {
            std::uint64_t announced = 0;
            for (char c : len) announced = announced * 10 + static_cast<unsigned>(c - '0');
            if (announced > st.body_limit) answer_now(st, too_large());
        }
    }

    static http_response busy()
    {
        http_response r;
        r.status = 503;
        r.headers.emplace_back("retry-after", "1");
        r.body = R"({"code":503,"message":"server busy: too many request bytes in flight"})";
        return r;
    }

    void release(h2_srv_stream& st)
    {
        if (st.held && opts.release) opts.release(st.held);
        st.held = 0;
    }

    static http_response too_large()
    {
        http_response r;
        r.status = 413;
        r.body = R"({"code":413,"message":"request body too large"})";
        return r;
    }

    static int on_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t id, std::uint8_t const* data, std::size_t len,
                             void* user)
    {
        auto& self = of(user);
        auto st = self.find(id);
        if (!st || st->refused) return 0;  // dropped; nghttp2 reopens the window
        if (st->req.body.size() + len > st->body_limit) {
            self.answer_now(*st, too_large());
            st->req.body.clear();
            return 0;
        }
        if (self.opts.try_reserve) {
            if (!self.opts.try_reserve(len)) {
                self.answer_now(*st, busy());
                st->req.body.clear();
                return 0;
            }
            st->held += len;
        }
        st->req.body.append(reinterpret_cast<char const*>(data), len);
        return 0;
    }

    static int on_stream_close(nghttp2_session*, std::int32_t id, std::uint32_t, void* user)
    {
        auto& self = of(user);
        auto it = self.streams.find(id);
        if (it == self.streams.end()) return 0;
        it->second->closed = true;
        self.release(*it->second);
        it->second->wake();
        self.streams.erase(it);
        self.last_activity = clock_type::now();
        return 0;
    }

    void on_end()
    {
        idle_timer.cancel();
        for (auto& [id, st] : streams) {
            st->closed = true;
            release(*st);
            st->wake();
        }
        streams.clear();
    }

    static asio::awaitable<void> run_handler(std::shared_ptr<h2_server> self, std::shared_ptr<h2_srv_stream> st);

    /// GOAWAY and close once nothing was received for idle_timeout with no stream open.
    static asio::awaitable<void> idle_watch(std::shared_ptr<h2_server> self)
    {
        auto& t = self->idle_timer;
        while (!self->pump.closed()) {
            auto const due = self->last_activity + self->opts.idle_timeout;
            if (self->streams.empty() && clock_type::now() >= due) {
                nghttp2_session_terminate_session(self->pump.session, NGHTTP2_NO_ERROR);
                self->pump.notify();
                co_return;
            }
            t.expires_at(std::max(due, clock_type::now() + std::chrono::seconds(1)));
            co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
        }
    }
};

class h2_sink final : public response_sink {
public:
    h2_sink(std::shared_ptr<h2_server> s, std::shared_ptr<h2_srv_stream> st) : srv_(std::move(s)), st_(std::move(st)) {}

    asio::awaitable<bool> send(http_response r) override
    {
        if (responded_ || gone()) co_return false;
        responded_ = true;
        st_->out = std::move(r.body);
        st_->out_eof = true;
        bool const body = !st_->out.empty();
        if (r.status == 204) r.content_type.clear();
        co_return srv_->submit(*st_, r.status, r.content_type, r.headers, body, st_->out.size());
    }
    asio::awaitable<bool> begin_stream(int status, std::string content_type, header_list headers) override
    {
        if (responded_ || gone()) co_return false;
        responded_ = true;
        streaming_ = true;
        co_return srv_->submit(*st_, status, content_type, headers, true, std::nullopt);
    }
    asio::awaitable<bool> write_chunk(std::string data) override
    {
        auto cs = co_await asio::this_coro::cancellation_state;
        if (!streaming_ || gone()) co_return false;
        if (st_->req.head) co_return true;  // its headers ended the stream: nothing is sent
        st_->out.append(data);
        resume();
        // Backpressure: a client that reads slowly (its window closed) stops the handler here.
        while (st_->queued() > max_queued_response && !gone()) {
            st_->signal.expires_at(clock_type::time_point::max());
            auto [ec] = co_await st_->signal.async_wait(asio::as_tuple(asio::use_awaitable));
            (void)ec;
            if (cs.cancelled() != asio::cancellation_type::none) co_return false;
        }
        co_return !gone();
    }
    asio::awaitable<bool> finish_stream() override
    {
        if (!streaming_ || gone()) co_return false;
        streaming_ = false;
        st_->out_eof = true;
        resume();
        co_return true;
    }
    /// A cut stream: what was written still goes out, then RST_STREAM(INTERNAL_ERROR).
    void abort() override
    {
        if (gone()) return;
        if (streaming_) {
            st_->abort_pending = true;
            resume();
            return;
        }
        nghttp2_submit_rst_stream(srv_->pump.session, NGHTTP2_FLAG_NONE, st_->id, NGHTTP2_INTERNAL_ERROR);
        srv_->pump.notify();
    }
    bool responded() const noexcept override { return responded_; }
    asio::awaitable<void> wait_peer_closed() override
    {
        auto cs = co_await asio::this_coro::cancellation_state;
        while (!gone()) {
            st_->closed_signal.expires_at(clock_type::time_point::max());
            auto [ec] = co_await st_->closed_signal.async_wait(asio::as_tuple(asio::use_awaitable));
            (void)ec;
            if (cs.cancelled() != asio::cancellation_type::none) co_return;
        }
    }

private:
    bool gone() const noexcept { return st_->closed || srv_->pump.closed(); }
    void resume()
    {
        if (st_->deferred) {
            st_->deferred = false;
            nghttp2_session_resume_data(srv_->pump.session, st_->id);
        }
        srv_->pump.notify();
    }

    std::shared_ptr<h2_server> srv_;
    std::shared_ptr<h2_srv_stream> st_;
    bool responded_ = false;
    bool streaming_ = false;
};

asio::awaitable<void> h2_server::run_handler(std::shared_ptr<h2_server> self, std::shared_ptr<h2_srv_stream> st)
{
    h2_sink sink(self, st);
    try {
        http_request req = std::move(st->req);
        st->req.received = req.received;
        // The call is made before co_await: g++ 12 must not see its by-value temporary inside co_await.
        auto handled = self->opts.handler(std::move(req), sink);
        co_await std::move(handled);
    } catch (std::exception const& e) {
        log_redacted(self->opts.logger, log_level::error, std::string("prism-e2b-local: handler failed: ") + e.what());
        if (sink.responded()) {
            sink.abort();
            co_return;
        }
    }
    if (!sink.responded()) {
        http_response r;
        r.status = 500;
        r.body = R"({"code":500,"message":"internal error"})";
        co_await sink.send(std::move(r));
    }
}

template <class Stream>
void close_lowest(Stream& s)
{
    boost::system::error_code ec;
    auto& sock = beast::get_lowest_layer(s).socket();
    sock.shutdown(asio::socket_base::shutdown_both, ec);
    sock.close(ec);
}

}  // namespace

template <class Stream>
asio::awaitable<void> serve_h2(Stream& stream, std::string initial, h2_serve_options const& opts)
{
    using namespace asio::experimental::awaitable_operators;
    auto ex = co_await asio::this_coro::executor;
    auto srv = std::make_shared<h2_server>(ex, opts);
    nghttp2_session_callbacks* cbs = nullptr;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, &h2_server::on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cbs, &h2_server::on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, &h2_server::on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, &h2_server::on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, &h2_server::on_stream_close);
    int const rv = nghttp2_session_server_new(&srv->pump.session, cbs, srv.get());
    nghttp2_session_callbacks_del(cbs);
    if (rv != 0) co_return;
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, max_concurrent_streams},
                                   {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1u << 20}};
    nghttp2_submit_settings(srv->pump.session, NGHTTP2_FLAG_NONE, iv, std::size(iv));
    srv->pump.on_end = [&stream, raw = srv.get()] {
        close_lowest(stream);
        raw->on_end();
    };
    if (!initial.empty() &&
        nghttp2_session_mem_recv(srv->pump.session, reinterpret_cast<std::uint8_t const*>(initial.data()),
                                 initial.size()) < 0) {
        close_lowest(stream);
        co_return;
    }
    beast::get_lowest_layer(stream).expires_never();
    asio::co_spawn(ex, h2_server::idle_watch(srv), asio::detached);
    co_await (srv->pump.read_loop(stream) && srv->pump.write_loop(stream));
    srv->pump.on_end = nullptr;  // `stream` goes away with the caller; handlers still running see closed()
}

template asio::awaitable<void> serve_h2<beast::tcp_stream>(beast::tcp_stream&, std::string, h2_serve_options const&);
template asio::awaitable<void> serve_h2<asio::ssl::stream<beast::tcp_stream&>>(asio::ssl::stream<beast::tcp_stream&>&,
                                                                               std::string, h2_serve_options const&);

}  // namespace prism_e2b::local::detail
