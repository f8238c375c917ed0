#include "wire/http1_stream.hpp"

#include "wire/transport_error.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <atomic>
#include <mutex>

namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace prism_e2b::wire {

namespace {

template <class Stream>
class stream_impl final : public http_stream {
public:
    stream_impl(lease l, Stream& s) : lease_(std::move(l)), stream_(s) {}
    ~stream_impl() override = default;  // the lease closes or pools the connection

    asio::awaitable<result<void>> start(beast_request const& req, time_point head_deadline, std::string what,
                                        exchange_progress& progress)
    {
        auto cs = co_await asio::this_coro::cancellation_state;
        what_ = std::move(what);
        auto& c = *lease_.conn;
        c.expire_at(head_deadline);
        auto [wec, wn] = co_await http::async_write(stream_, req, asio::as_tuple(asio::use_awaitable));
        if (wec) co_return io_error(wec, cs, what_);
        parser_.body_limit(boost::none);  // the envelope decoder bounds messages
        auto [rec, rn] =
            co_await http::async_read_header(stream_, c.buffer, parser_, asio::as_tuple(asio::use_awaitable));
        progress.got_bytes = rn > 0 || parser_.got_some();
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
            c.expire_at(earliest(time_point::max(), idle_timeout));
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

template <class Stream>
asio::awaitable<result<std::unique_ptr<http_stream>>> open_on(lease l, Stream& s, beast_request const& req,
                                                              time_point head_deadline, exchange_progress& progress,
                                                              std::string what)
{
    auto strand = l.conn->strand;
    auto p = std::make_unique<stream_impl<Stream>>(std::move(l), s);
    auto started = co_await on_strand(strand, p->start(req, head_deadline, std::move(what), progress));
    if (!started) co_return started.error();  // the lease closes the connection
    co_return std::unique_ptr<http_stream>(std::move(p));
}

}  // namespace

asio::awaitable<result<std::unique_ptr<http_stream>>> open_stream_on(lease l, beast_request const& req,
                                                                     time_point head_deadline,
                                                                     exchange_progress& progress, std::string what)
{
    auto& c = *l.conn;
    if (c.tls) co_return co_await open_on(std::move(l), *c.tls, req, head_deadline, progress, std::move(what));
    co_return co_await open_on(std::move(l), *c.plain, req, head_deadline, progress, std::move(what));
}

}  // namespace prism_e2b::wire
