// filesystem.Filesystem/WatchDir: a Connect server stream of filesystem
// events. The call completes once envd's start message arrived (the watch is
// in place); start and keepalive messages are consumed, events yielded, the
// end-of-stream error mapped, and a cut stream reported as unknown_outcome.
#include "core/spawn_op.hpp"
#include "protocol/envelope.hpp"
#include "wire/client_impl.hpp"
#include "wire/error_map.hpp"
#include "wire/protojson.hpp"

#include <boost/asio/this_coro.hpp>

#include <atomic>
#include <deque>

namespace asio = boost::asio;

namespace prism_e2b::wire {
namespace {

constexpr char const* watch_rpc = "filesystem.Filesystem/WatchDir";

/// Thread safety: one read at a time (the interface's contract); close() may
/// be called from any thread (it only forwards to the http_stream's close()).
class watch_stream final : public e2b::watch_event_stream {
public:
    watch_stream(asio::any_io_executor ex, std::unique_ptr<http_stream> s, semaphore_permit slot,
                 std::chrono::milliseconds idle_timeout)
        : ex_(std::move(ex)), stream_(std::move(s)), slot_(std::move(slot)), idle_timeout_(idle_timeout)
    {
    }

    ~watch_stream() override { stream_->close(); }

    void close() noexcept override
    {
        closed_ = true;
        stream_->close();
    }

    /// Reads up to envd's start message (the watch is in place).
    asio::awaitable<result<void>> await_start()
    {
        auto m = co_await guarded_next_message();
        if (!m) co_return m.error();
        if (!std::holds_alternative<protojson::watch_start>(*m))
            co_return fail(errc::protocol_error, "the watch stream did not begin with a start message");
        co_return result<void>();
    }

protected:
    void do_next(completion_handler<std::optional<e2b::fs_event>> h) override
    {
        detail::spawn_op(ex_, next(), std::move(h));
    }

private:
    asio::awaitable<result<std::optional<e2b::fs_event>>> next()
    {
        // A cancellation emitted before this read began only marked the state.
        co_await asio::this_coro::throw_if_cancelled(false);
        if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) {
            close();
            co_return fail(errc::cancelled, "cancelled");
        }
        for (;;) {
            auto m = co_await guarded_next_message();
            if (!m) co_return m.error();
            if (finished_) co_return std::nullopt;
            if (auto* ev = std::get_if<e2b::fs_event>(&*m)) co_return std::optional<e2b::fs_event>(std::move(*ev));
            if (std::holds_alternative<protojson::watch_start>(*m))
                co_return fail(errc::protocol_error, "a second start message");
            // keepalive: read on
        }
    }

    /// next_message(), with a sticky failure and cancellation as errc::cancelled.
    asio::awaitable<result<protojson::watch_message>> guarded_next_message()
    {
        if (failed_) co_return *failed_;
        if (finished_) co_return protojson::watch_message{protojson::watch_keepalive{}};
        try {
            auto r = co_await next_message();
            if (!r) remember(r.error());
            co_return r;
        } catch (boost::system::system_error const& e) {
            if (e.code() != asio::error::operation_aborted) throw;
            co_return fail(errc::cancelled, "cancelled");
        }
    }

    error fail(errc c, std::string msg)
    {
        error e(c, msg, {watch_rpc, 200, {}});
        remember(e);
        return e;
    }
    void remember(error e)
    {
        failed_ = std::move(e);
        stream_->close();
        slot_.reset();
    }

    /// The next message; after a clean end-of-stream finished_ is set and a keepalive returned.
    asio::awaitable<result<protojson::watch_message>> next_message()
    {
        for (;;) {
            if (!pending_.empty()) {
                auto env = std::move(pending_.front());
                pending_.pop_front();
                if (env.end_stream()) {
                    auto eos = protojson::parse_end_of_stream(env.payload);
                    if (!eos) co_return fail(errc::protocol_error, eos.error().message());
                    if (eos->failed) co_return connect_error(watch_rpc, eos->code, eos->message, 200);
                    finished_ = true;
                    stream_->close();  // a watch never resumes: do not pool a half-read connection
                    slot_.reset();
                    co_return protojson::watch_message{protojson::watch_keepalive{}};
                }
                auto m = protojson::parse_watch_response(env.payload);
                if (!m) co_return fail(errc::protocol_error, m.error().message());
                co_return std::move(*m);
            }
            if (closed_) co_return fail(errc::cancelled, "stream closed");
            if (stream_->done())
                co_return fail(errc::unknown_outcome,
                               "the watch stream ended without its end-of-stream message; events may have been missed");
            auto piece = co_await stream_->read_some(idle_timeout_);
            if (!piece) {
                if (piece.error() == errc::cancelled || closed_) co_return fail(errc::cancelled, "stream closed");
                co_return fail(errc::unknown_outcome, "the watch stream was cut (" + piece.error().message() +
                                                          "); events may have been missed");
            }
            if (piece->empty()) continue;  // the body ended: the loop sees done()
            std::vector<envelope> out;
            auto fed = decoder_.feed(*piece, out);
            for (auto& e : out) pending_.push_back(std::move(e));
            if (!fed && pending_.empty()) co_return fail(errc::protocol_error, fed.error().message());
        }
    }

    asio::any_io_executor ex_;
    std::unique_ptr<http_stream> stream_;
    semaphore_permit slot_;
    std::chrono::milliseconds idle_timeout_;
    envelope_decoder decoder_;
    std::deque<envelope> pending_;
    std::optional<error> failed_;
    bool finished_ = false;
    std::atomic<bool> closed_{false};
};

}  // namespace

asio::awaitable<result<std::unique_ptr<e2b::watch_event_stream>>> client_impl::watch_dir(e2b::envd_target target,
                                                                                         e2b::watch_dir_params params)
{
    using stream = std::unique_ptr<e2b::watch_event_stream>;
    if (params.path.empty() || params.path.find('\0') != std::string::npos)
        return refused<stream>(error(errc::invalid_argument, "watch_dir needs a path without NUL", {watch_rpc, 0, {}}));
    if (params.timeout.count() < 0)
        return refused<stream>(
            error(errc::invalid_argument, "watch_dir: timeout must not be negative", {watch_rpc, 0, {}}));
    return when_opening<stream>([this, target = std::move(target), params = std::move(params)]() mutable {
        return watch_dir_now(std::move(target), std::move(params));
    });
}

asio::awaitable<result<std::unique_ptr<e2b::watch_event_stream>>> client_impl::watch_dir_now(
    e2b::envd_target target, e2b::watch_dir_params params)
{
    std::string rpc = watch_rpc;  // named: g++ 12 and temporaries inside co_await
    auto body = protojson::watch_dir_request(params);
    auto opened =
        co_await open_connect_stream(std::move(rpc), std::move(target), std::move(body), params.timeout, params.user);
    if (!opened) co_return opened.error();
    auto s = std::make_unique<watch_stream>(get_executor(), std::move(opened->stream), std::move(opened->slot),
                                            opts_.raw.stream_idle_timeout);
    if (auto started = co_await s->await_start(); !started) co_return started.error();
    co_return std::unique_ptr<e2b::watch_event_stream>(std::move(s));
}

void client_impl::do_watch_dir(e2b::envd_target target, e2b::watch_dir_params params,
                               completion_handler<std::unique_ptr<e2b::watch_event_stream>> h)
{
    detail::spawn_op(get_executor(), watch_dir(std::move(target), std::move(params)), std::move(h));
}

}  // namespace prism_e2b::wire
