// process_event_stream over a Connect server stream (Start / Connect):
// envelopes decoded as bytes arrive, the event order checked (start first,
// end before the end-of-stream envelope), and a cut stream reported as
// errc::unknown_outcome, never as an exit.
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

/// Thread safety: one read at a time (the interface's contract); close() may
/// be called from any thread (it only forwards to the http_stream's close()).
class process_stream final : public e2b::process_event_stream {
public:
    process_stream(asio::any_io_executor ex, std::unique_ptr<http_stream> s, semaphore_permit slot, std::string op,
                   std::chrono::milliseconds idle_timeout)
        : ex_(std::move(ex)),
          stream_(std::move(s)),
          slot_(std::move(slot)),
          op_(std::move(op)),
          idle_timeout_(idle_timeout)
    {
    }

    ~process_stream() override { stream_->close(); }

    void close() noexcept override
    {
        closed_ = true;
        stream_->close();
    }

protected:
    void do_next(completion_handler<std::optional<e2b::process_event>> h) override
    {
        detail::spawn_op(ex_, next(), std::move(h));
    }

private:
    asio::awaitable<result<std::optional<e2b::process_event>>> next()
    {
        if (failed_) co_return *failed_;
        if (finished_) co_return std::nullopt;
        // A cancellation emitted before this read began only marked the state.
        co_await asio::this_coro::throw_if_cancelled(false);
        if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) {
            fail(error(errc::cancelled, "cancelled", {op_, 0, {}}));
            co_return *failed_;
        }
        try {
            auto r = co_await step();
            if (!r) fail(r.error());
            co_return r;
        } catch (boost::system::system_error const& e) {
            if (e.code() != asio::error::operation_aborted) throw;
            fail(error(errc::cancelled, "cancelled", {op_, 0, {}}));
            co_return *failed_;
        }
    }

    void fail(error e)
    {
        failed_ = std::move(e);
        stream_->close();
        slot_.reset();
    }

    error err(errc c, std::string msg) const { return error(c, msg, {op_, 200, {}}); }

    asio::awaitable<result<std::optional<e2b::process_event>>> step()
    {
        for (;;) {
            if (!pending_.empty()) {
                auto env = std::move(pending_.front());
                pending_.pop_front();
                if (env.end_stream()) co_return co_await on_end_of_stream(env.payload);
                auto ev = protojson::parse_process_event(env.payload);
                if (!ev) co_return err(errc::protocol_error, ev.error().message());
                if (!saw_start_ && !std::holds_alternative<e2b::start_event>(*ev) &&
                    !std::holds_alternative<e2b::keepalive_event>(*ev))
                    co_return err(errc::protocol_error, "the first event is not start");
                if (std::holds_alternative<e2b::start_event>(*ev)) {
                    if (saw_start_) co_return err(errc::protocol_error, "a second start event");
                    saw_start_ = true;
                } else if (std::holds_alternative<e2b::end_event>(*ev)) {
                    if (saw_end_) co_return err(errc::protocol_error, "a second end event");
                    saw_end_ = true;
                } else if (saw_end_ && !std::holds_alternative<e2b::keepalive_event>(*ev)) {
                    co_return err(errc::protocol_error, "an event after the end event");
                }
                co_return std::optional<e2b::process_event>(std::move(*ev));
            }
            if (decoder_failed_) co_return err(errc::protocol_error, decoder_failed_->message());
            if (closed_) co_return err(errc::cancelled, "stream closed");
            if (stream_->done()) co_return cut("the stream ended without its end-of-stream message");
            auto piece = co_await stream_->read_some(idle_timeout_);
            if (!piece) {
                if (piece.error() == errc::cancelled || closed_) co_return err(errc::cancelled, "stream closed");
                co_return cut("the stream was cut: " + piece.error().message());
            }
            if (piece->empty()) continue;  // the body ended: loop sees done()
            std::vector<envelope> out;
            auto fed = decoder_.feed(*piece, out);
            for (auto& e : out) pending_.push_back(std::move(e));
            if (!fed) {
                if (pending_.empty()) co_return err(errc::protocol_error, fed.error().message());
                decoder_failed_ = fed.error();
            }
        }
    }

    /// Without an end event the process's fate is unknown; after it, a missing
    /// end-of-stream message is a protocol violation.
    error cut(std::string why) const
    {
        if (decoder_failed_) return err(errc::protocol_error, decoder_failed_->message());
        if (!saw_end_) return err(errc::unknown_outcome, why + " before the process's end event");
        return err(errc::protocol_error, why);
    }

    asio::awaitable<result<std::optional<e2b::process_event>>> on_end_of_stream(std::string payload)
    {
        auto eos = protojson::parse_end_of_stream(payload);
        if (!eos) co_return err(errc::protocol_error, eos.error().message());
        if (eos->failed) co_return connect_error(op_, eos->code, eos->message, 200);
        if (!saw_end_)
            co_return err(errc::unknown_outcome, "the stream ended cleanly but without the process's end event");
        // Read the HTTP body to its end so the connection can be pooled.
        while (!stream_->done()) {
            auto piece = co_await stream_->read_some(std::chrono::milliseconds(5000));
            if (!piece) break;
            if (!piece->empty()) {
                std::vector<envelope> out;
                if (!decoder_.feed(*piece, out))
                    co_return err(errc::protocol_error, "data after the end-of-stream message");
            }
        }
        finished_ = true;
        slot_.reset();
        co_return std::nullopt;
    }

    asio::any_io_executor ex_;
    std::unique_ptr<http_stream> stream_;
    semaphore_permit slot_;
    std::string op_;
    std::chrono::milliseconds idle_timeout_;
    envelope_decoder decoder_;
    std::deque<envelope> pending_;
    std::optional<error> decoder_failed_;
    std::optional<error> failed_;
    bool saw_start_ = false;
    bool saw_end_ = false;
    bool finished_ = false;
    std::atomic<bool> closed_{false};
};

}  // namespace

std::unique_ptr<e2b::process_event_stream> make_process_event_stream(asio::any_io_executor ex,
                                                                     std::unique_ptr<http_stream> stream,
                                                                     semaphore_permit slot, std::string operation,
                                                                     std::chrono::milliseconds idle_timeout)
{
    return std::make_unique<process_stream>(std::move(ex), std::move(stream), std::move(slot), std::move(operation),
                                            idle_timeout);
}

}  // namespace prism_e2b::wire
