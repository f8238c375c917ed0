#include "wire/h2_connection.hpp"

#include "protocol/ascii_lower.hpp"
#include "protocol/h2_pump.hpp"
#include "wire/body_decoder.hpp"
#include "wire/transport_error.hpp"

#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/string.hpp>

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

namespace prism_e2b::wire {

namespace {

class h2_error_category final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "http2"; }
    std::string message(int code) const override
    {
        return std::string("stream reset by the server: ") + nghttp2_http2_strerror(static_cast<std::uint32_t>(code));
    }
};

std::int64_t ticks(clock_type::time_point t) noexcept { return t.time_since_epoch().count(); }

}  // namespace

boost::system::error_category const& h2_category() noexcept
{
    static h2_error_category const c;
    return c;
}

/// One request/response. Lives in the connection's stream map while nghttp2
/// knows it, and in the caller's handle while it reads. Strand only.
struct h2_stream {
    explicit h2_stream(strand_type const& s) : signal(s, clock_type::time_point::max()) {}
    std::int32_t id = -1;
    std::string body;  ///< request body being sent
    std::size_t sent = 0;
    int status = 0;
    header_list headers;
    bool head = false;
    std::deque<std::string> data;  ///< received, not yet read (bounded by the stream window)
    bool eof = false;              ///< END_STREAM received
    bool closed = false;           ///< nghttp2 closed it
    bool finished = false;         ///< the reader took the end
    bool replayable = false;       ///< refused: the server did not process it
    std::optional<error> failure;
    asio::steady_timer signal;  ///< wakes the one waiter

    void wake() { signal.cancel(); }
};

struct h2_connection::impl {
    impl(h2_connection& o, strand_type const& s) : owner(o), pump(s) {}
    h2_connection& owner;
    protocol::h2_pump pump;
    std::map<std::int32_t, std::shared_ptr<h2_stream>> streams;
    std::string what;

    static h2_stream* stream_of(nghttp2_session* s, std::int32_t id)
    {
        return static_cast<h2_stream*>(nghttp2_session_get_stream_user_data(s, id));
    }

    static int on_header(nghttp2_session* s, nghttp2_frame const* f, std::uint8_t const* name, std::size_t namelen,
                         std::uint8_t const* value, std::size_t valuelen, std::uint8_t, void*)
    {
        if (f->hd.type != NGHTTP2_HEADERS) return 0;
        auto* st = stream_of(s, f->hd.stream_id);
        if (!st || st->head) return 0;  // trailers are not used by this client
        std::string_view n(reinterpret_cast<char const*>(name), namelen);
        std::string_view v(reinterpret_cast<char const*>(value), valuelen);
        if (n == ":status") {
            st->status = 0;
            for (char c : v) st->status = st->status * 10 + (c - '0');
            st->headers.clear();  // a 1xx head's fields are not the response's
        } else if (!n.starts_with(':')) {
            st->headers.emplace_back(std::string(n), std::string(v));
        }
        return 0;
    }

    static int on_frame_recv(nghttp2_session* s, nghttp2_frame const* f, void* user)
    {
        auto& self = *static_cast<impl*>(user);
        switch (f->hd.type) {
            case NGHTTP2_HEADERS:
            case NGHTTP2_DATA: {
                auto* st = stream_of(s, f->hd.stream_id);
                if (!st) break;
                if (f->hd.type == NGHTTP2_HEADERS && st->status >= 200) st->head = true;
                if (f->hd.flags & NGHTTP2_FLAG_END_STREAM) {
                    st->eof = true;
                    st->head = true;
                }
                st->wake();
                break;
            }
            case NGHTTP2_SETTINGS: {
                auto const peer = nghttp2_session_get_remote_settings(s, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
                self.owner.capacity_.store(std::min<std::size_t>(self.settings.max_streams, peer));
                break;
            }
            case NGHTTP2_GOAWAY:
                // New streams go elsewhere; nghttp2 closes those above last_stream_id
                // with REFUSED_STREAM, and the others finish.
                self.owner.accepting_.store(false);
                break;
            default:
                break;
        }
        return 0;
    }

    static int on_data_chunk(nghttp2_session* s, std::uint8_t, std::int32_t id, std::uint8_t const* data,
                             std::size_t len, void*)
    {
        auto* st = stream_of(s, id);
        if (!st || st->failure) {  // nobody will read it (reset by us): its window reopens now
            nghttp2_session_consume(s, id, len);
            return 0;
        }
        st->data.emplace_back(reinterpret_cast<char const*>(data), len);
        st->wake();
        return 0;
    }

    static int on_stream_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* user)
    {
        auto& self = *static_cast<impl*>(user);
        auto it = self.streams.find(id);
        if (it == self.streams.end()) return 0;
        auto st = it->second;
        self.streams.erase(it);
        st->closed = true;
        if (!st->eof && !st->failure) {
            if (code == NGHTTP2_REFUSED_STREAM) st->replayable = true;
            if (code == NGHTTP2_NO_ERROR) code = NGHTTP2_INTERNAL_ERROR;  // closed before its end
            st->failure = error(boost::system::error_code(static_cast<int>(code), h2_category()),
                                self.what + ": stream reset by the server (" + nghttp2_http2_strerror(code) + ")");
        }
        self.owner.active_.fetch_sub(1);
        if (self.streams.empty()) self.owner.idle_since_.store(ticks(clock_type::now()));
        st->wake();
        return 0;
    }

    static ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length,
                             std::uint32_t* flags, nghttp2_data_source* src, void*)
    {
        auto* st = static_cast<h2_stream*>(src->ptr);
        auto const n = std::min(length, st->body.size() - st->sent);
        std::copy_n(st->body.data() + st->sent, n, buf);
        st->sent += n;
        if (st->sent == st->body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
        return static_cast<ssize_t>(n);
    }

    /// The pump ended: every open stream fails with the connection's error.
    void on_end()
    {
        owner.accepting_.store(false);
        owner.conn_->close_now();
        auto const ec = pump.reason() ? pump.reason() : asio::error::make_error_code(asio::error::eof);
        auto const streams_left = std::move(streams);
        streams.clear();
        for (auto const& [id, st] : streams_left) {
            st->closed = true;
            if (!st->eof && !st->failure) st->failure = error(ec, what + ": connection lost: " + ec.message());
            owner.active_.fetch_sub(1);
            st->wake();
        }
    }

    h2_settings settings;
};

h2_connection::h2_connection(std::shared_ptr<connection> c)
    : conn_(std::move(c)), impl_(std::make_unique<impl>(*this, conn_->strand))
{
    idle_since_.store(ticks(clock_type::now()));
}

h2_connection::~h2_connection() = default;

clock_type::time_point h2_connection::idle_since() const noexcept
{
    return clock_type::time_point(clock_type::duration(idle_since_.load()));
}

result<std::shared_ptr<h2_connection>> h2_connection::start(std::shared_ptr<connection> c, h2_settings s,
                                                            std::string what)
{
    auto self = std::shared_ptr<h2_connection>(new h2_connection(std::move(c)));
    auto& i = *self->impl_;
    i.settings = s;
    i.what = std::move(what);
    self->capacity_.store(s.max_streams);
    nghttp2_session_callbacks* cbs = nullptr;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_on_header_callback(cbs, &impl::on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, &impl::on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, &impl::on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, &impl::on_stream_close);
    nghttp2_option* opt = nullptr;
    nghttp2_option_new(&opt);
    nghttp2_option_set_no_auto_window_update(opt, 1);  // windows open as the reader consumes
    int const rv = nghttp2_session_client_new2(&i.pump.session, cbs, &i, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
    if (rv != 0) return error(errc::protocol_error, i.what + ": cannot start an HTTP/2 session");
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                   {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, s.stream_window},
                                   {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 0}};
    nghttp2_submit_settings(i.pump.session, NGHTTP2_FLAG_NONE, iv, std::size(iv));
    nghttp2_session_set_local_window_size(i.pump.session, NGHTTP2_FLAG_NONE, 0,
                                          static_cast<std::int32_t>(s.connection_window));
    i.pump.on_end = [&i] { i.on_end(); };
    auto run_reader = [](std::shared_ptr<h2_connection> keep) -> asio::awaitable<void> {
        auto& p = keep->impl_->pump;
        co_await keep->conn_->with_stream([&p](auto& st) { return p.read_loop(st); });
    };
    auto run_writer = [](std::shared_ptr<h2_connection> keep) -> asio::awaitable<void> {
        auto& p = keep->impl_->pump;
        co_await keep->conn_->with_stream([&p](auto& st) { return p.write_loop(st); });
    };
    self->conn_->expire_at(clock_type::time_point::max());
    asio::co_spawn(self->conn_->strand, run_reader(self), asio::detached);
    asio::co_spawn(self->conn_->strand, run_writer(self), asio::detached);
    return self;
}

namespace {

bool connection_specific(std::string_view name)
{
    using boost::beast::iequals;
    return iequals(name, "connection") || iequals(name, "keep-alive") || iequals(name, "proxy-connection") ||
           iequals(name, "transfer-encoding") || iequals(name, "upgrade") || iequals(name, "host");
}

nghttp2_nv make_nv(std::string const& n, std::string const& v)
{
    return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(n.data())),
            reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data())), n.size(), v.size(), NGHTTP2_NV_FLAG_NONE};
}

/// Waits on `st`'s signal until `deadline`; false when it passed. Cancellation
/// shows in the caller's cancellation state.
asio::awaitable<bool> wait_signal(h2_stream& st, clock_type::time_point deadline)
{
    st.signal.expires_at(deadline);
    auto [ec] = co_await st.signal.async_wait(asio::as_tuple(asio::use_awaitable));
    co_return !(!ec && deadline != clock_type::time_point::max());
}

}  // namespace

asio::awaitable<result<std::shared_ptr<h2_stream>>> h2_connection::open(origin const& o, http_request const& req,
                                                                        bool accept_gzip,
                                                                        clock_type::time_point head_deadline,
                                                                        bool& replayable, std::string what)
{
    auto cs = co_await asio::this_coro::cancellation_state;
    auto& i = *impl_;
    replayable = false;
    if (i.pump.closed() || !nghttp2_session_check_request_allowed(i.pump.session)) {
        active_.fetch_sub(1);
        replayable = true;
        co_return error(asio::error::make_error_code(asio::error::connection_aborted),
                        what + ": the HTTP/2 connection takes no new streams");
    }
    // Pseudo-headers first, then the fields lower-cased (RFC 9113 8.2), minus
    // the connection-specific ones HTTP/2 forbids.
    std::vector<std::pair<std::string, std::string>> fields;
    fields.reserve(req.headers.size() + 6);
    fields.emplace_back(":method", req.method);
    fields.emplace_back(":scheme", o.tls ? "https" : "http");
    fields.emplace_back(":authority", o.host_header());
    fields.emplace_back(":path", o.base_path + req.target);
    for (auto const& [k, v] : req.headers)
        if (!connection_specific(k)) fields.emplace_back(protocol::ascii_lower(k), v);
    if (accept_gzip && !find_header(req.headers, "Accept-Encoding"))
        fields.emplace_back("accept-encoding", std::string(accepted_encodings));
    if (!req.body.empty() && !find_header(req.headers, "Content-Length"))
        fields.emplace_back("content-length", std::to_string(req.body.size()));
    std::vector<nghttp2_nv> nv;
    nv.reserve(fields.size());
    for (auto const& [k, v] : fields) nv.push_back(make_nv(k, v));

    auto st = std::make_shared<h2_stream>(conn_->strand);
    st->body = req.body;
    nghttp2_data_provider prd{};
    prd.source.ptr = st.get();
    prd.read_callback = &impl::read_body;
    bool const has_body = !req.method.empty() && req.method != "GET" && req.method != "HEAD";
    auto const id =
        nghttp2_submit_request(i.pump.session, nullptr, nv.data(), nv.size(), has_body ? &prd : nullptr, st.get());
    if (id < 0) {
        active_.fetch_sub(1);
        accepting_.store(false);  // stream ids used up
        replayable = true;
        co_return error(errc::protocol_error, what + ": " + nghttp2_strerror(static_cast<int>(id)));
    }
    st->id = id;
    i.streams.emplace(id, st);
    i.pump.notify();
    while (!st->head && !st->failure) {
        bool const in_time = co_await wait_signal(*st, head_deadline);
        if (cancelled(cs)) {
            reset(st);
            co_return error(errc::cancelled, what + ": cancelled");
        }
        if (!in_time && !st->head && !st->failure) {
            reset(st);
            co_return error(errc::timed_out, what + ": deadline passed before the response head");
        }
    }
    if (!st->head && st->failure) {
        replayable = st->replayable;
        co_return *st->failure;
    }
    co_return st;
}

asio::awaitable<result<std::string>> h2_connection::read(std::shared_ptr<h2_stream> st, std::chrono::milliseconds idle,
                                                         std::string const& what)
{
    auto cs = co_await asio::this_coro::cancellation_state;
    for (;;) {
        if (!st->data.empty()) {
            std::string piece = std::move(st->data.front());
            st->data.pop_front();
            give_back(*st, piece.size());
            co_return piece;
        }
        if (st->eof) {
            st->finished = true;
            co_return std::string{};
        }
        if (st->failure) co_return *st->failure;
        auto const deadline = idle.count() > 0 ? clock_type::now() + idle : clock_type::time_point::max();
        bool const in_time = co_await wait_signal(*st, deadline);
        if (cancelled(cs)) {
            reset(st);
            co_return error(errc::cancelled, what + ": cancelled");
        }
        if (!in_time && st->data.empty() && !st->eof && !st->failure) {
            reset(st);
            co_return error(errc::timed_out, what + ": no data for " + std::to_string(idle.count()) + " ms");
        }
    }
}

void h2_connection::give_back(h2_stream& st, std::size_t n) noexcept
{
    auto& p = impl_->pump;
    if (n == 0 || p.closed()) return;
    // A closed stream has no window of its own any more; the connection's still counts the bytes.
    if (st.closed)
        nghttp2_session_consume_connection(p.session, n);
    else
        nghttp2_session_consume(p.session, st.id, n);
    p.notify();
}

void h2_connection::reset(std::shared_ptr<h2_stream> const& st) noexcept
{
    std::size_t unread = 0;
    for (auto const& d : st->data) unread += d.size();
    st->data.clear();
    give_back(*st, unread);
    if (st->closed || impl_->pump.closed()) return;
    if (!st->failure) st->failure = error(errc::cancelled, impl_->what + ": stream closed");
    nghttp2_submit_rst_stream(impl_->pump.session, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL);
    impl_->pump.notify();
}

void h2_connection::shutdown() noexcept
{
    accepting_.store(false);
    asio::dispatch(conn_->strand, [self = shared_from_this()] {
        auto& p = self->impl_->pump;
        if (p.closed()) return;
        nghttp2_session_terminate_session(p.session, NGHTTP2_NO_ERROR);
        p.notify();
        if (self->impl_->streams.empty()) self->conn_->close_now();
    });
}

int h2_connection::status_of(h2_stream const& s) noexcept { return s.status; }
header_list const& h2_connection::headers_of(h2_stream const& s) noexcept { return s.headers; }
bool h2_connection::done_of(h2_stream const& s) noexcept { return s.finished; }

namespace {

/// Thread safety: one read_some() at a time; close() from any thread.
class h2_response_stream final : public http_stream {
public:
    h2_response_stream(std::shared_ptr<h2_connection> c, std::shared_ptr<h2_stream> s, std::string what)
        : conn_(std::move(c)),
          stream_(std::move(s)),
          what_(std::move(what)),
          status_(h2_connection::status_of(*stream_)),
          headers_(h2_connection::headers_of(*stream_))
    {
    }
    ~h2_response_stream() override { close(); }

    int status() const noexcept override { return status_; }
    header_list const& headers() const noexcept override { return headers_; }
    asio::awaitable<result<std::string>> read_some(std::chrono::milliseconds idle_timeout) override
    {
        auto r = co_await on_strand(conn_->strand(), conn_->read(stream_, idle_timeout, what_));
        if (r && r->empty()) done_.store(true);
        co_return r;
    }
    bool done() const noexcept override { return done_.load(); }
    void close() noexcept override
    {
        if (done_.load()) return;
        asio::dispatch(conn_->strand(), [c = conn_, s = stream_] { c->reset(s); });
    }

private:
    std::shared_ptr<h2_connection> conn_;
    std::shared_ptr<h2_stream> stream_;
    std::string what_;
    int status_;
    header_list headers_;
    std::atomic<bool> done_{false};
};

}  // namespace

std::unique_ptr<http_stream> make_h2_response_stream(std::shared_ptr<h2_connection> c, std::shared_ptr<h2_stream> s,
                                                     std::string what)
{
    return std::make_unique<h2_response_stream>(std::move(c), std::move(s), std::move(what));
}

}  // namespace prism_e2b::wire
