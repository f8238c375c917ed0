// The background reader of a long-running process and its process_handle.
#include "adapter/process_state.hpp"

#include "adapter/spawn_op.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace asio = boost::asio;

namespace prism_e2b::detail {

process_exit map_end_event(e2b::end_event const& end, bool kill_requested)
{
    process_exit e;
    e.status = end.status;
    if (end.exited) {
        e.exit_code = end.exit_code;
        e.outcome = exit_outcome::exited;
    } else if (kill_requested || end.status.find("signal") != std::string::npos) {
        e.outcome = exit_outcome::killed;
    } else {
        e.outcome = exit_outcome::unknown;
    }
    if (e.status.empty() && end.error) e.status = *end.error;
    return e;
}

e2b_process_state::e2b_process_state(std::shared_ptr<e2b_sandbox_core> c, std::uint32_t p, std::string r,
                                     output_callback cb)
    : core(std::move(c)), pid(p), ref(std::move(r)), on_data(std::move(cb)), strand(asio::make_strand(core->executor))
{
}

namespace {

// Follows the stream until the end event, a break or cancellation. Runs on the strand.
asio::awaitable<void> read_events(std::shared_ptr<e2b_process_state> self,
                                  std::unique_ptr<e2b::process_event_stream> stream, std::uint64_t epoch)
{
    co_await asio::this_coro::throw_if_cancelled(false);
    for (;;) {
        if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none)
            co_return;  // emitted while no read was pending
        auto r = co_await stream->next();
        auto const cancelled =
            (co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none;
        if (cancelled || self->released || self->exit) co_return;
        if (!r) {
            // A pause (ours) cuts streams; the process lives on after a memory
            // resume, so this is not an outcome yet.
            if (self->core->current_pause_epoch() != epoch || self->core->current_state() != sandbox_state::running) {
                self->suspended = true;
                co_return;
            }
            process_exit e;
            e.outcome = self->kill_requested ? exit_outcome::killed : exit_outcome::unknown;
            e.status = r.error().message();
            self->finish(std::move(e));
            co_return;
        }
        if (!*r) {
            process_exit e;
            e.outcome = self->kill_requested ? exit_outcome::killed : exit_outcome::unknown;
            e.status = "stream ended without an end event";
            self->finish(std::move(e));
            co_return;
        }
        auto& ev = **r;
        if (auto* d = std::get_if<e2b::data_event>(&ev)) {
            if (self->on_data && !d->bytes.empty())
                self->on_data(d->stream == e2b::data_event::stream_kind::stderr_data ? output_stream::stderr_stream
                                                                                     : output_stream::stdout_stream,
                              d->bytes);
        } else if (auto* end = std::get_if<e2b::end_event>(&ev)) {
            self->finish(map_end_event(*end, self->kill_requested));
            co_return;
        }
    }
}

}  // namespace

void e2b_process_state::start_reader(std::unique_ptr<e2b::process_event_stream> stream, std::uint64_t epoch)
{
    stop_reader();
    suspended = false;
    reader_epoch = epoch;
    auto sig = std::make_shared<asio::cancellation_signal>();
    reader_cancel = sig;
    auto self = shared_from_this();
    asio::co_spawn(strand, read_events(self, std::move(stream), epoch),
                   asio::bind_cancellation_slot(sig->slot(), [self, sig](std::exception_ptr) {
                       // Completion runs on the strand: the reader is done.
                       if (self->reader_cancel == sig) self->reader_cancel.reset();
                   }));
}

void e2b_process_state::stop_reader()
{
    if (auto sig = std::exchange(reader_cancel, nullptr)) sig->emit(asio::cancellation_type::terminal);
}

void e2b_process_state::finish(process_exit e)
{
    if (exit) return;
    exit = std::move(e);
    for (auto* t : waiters) t->cancel();
}

void e2b_process_state::on_gone(std::string why)
{
    asio::dispatch(strand, [self = shared_from_this(), why = std::move(why)]() mutable {
        self->stop_reader();
        self->suspended = false;
        process_exit e;
        e.outcome = exit_outcome::unknown;
        e.status = std::move(why);
        self->finish(std::move(e));
    });
}

void e2b_process_state::on_resumed()
{
    auto self = shared_from_this();
    asio::dispatch(strand, [self] {
        if (!self->suspended || self->exit || self->released || self->reader_cancel) return;
        // Owned like a reader: stop_reader() cancels the re-attach too.
        auto sig = std::make_shared<asio::cancellation_signal>();
        self->reader_cancel = sig;
        asio::co_spawn(self->strand, reattach(self, sig),
                       asio::bind_cancellation_slot(sig->slot(), [self, sig](std::exception_ptr) {
                           if (self->reader_cancel == sig) self->reader_cancel.reset();
                       }));
    });
}

asio::awaitable<void> e2b_process_state::reattach(std::shared_ptr<e2b_process_state> self,
                                                  std::shared_ptr<asio::cancellation_signal> sig)
{
    co_await asio::this_coro::throw_if_cancelled(false);
    if (!self->suspended || self->exit || self->released) co_return;
    auto target = self->core->activity_target("process.reattach");
    if (!target) co_return;
    auto const epoch = self->core->current_pause_epoch();
    auto s =
        co_await self->core->client->connect_process(*target, pid_selector(self->pid), std::chrono::milliseconds(0));
    if (self->reader_cancel != sig || !self->suspended || self->exit || self->released)
        co_return;                // cancelled (kill/release) or overtaken
    self->reader_cancel.reset();  // this re-attach hands over to the reader
    if (!s) {
        process_exit e;
        e.outcome = exit_outcome::unknown;
        e.status = s.error() == errc::not_found ? "process is gone" : s.error().message();
        self->finish(std::move(e));
        co_return;
    }
    self->start_reader(std::move(*s), epoch);
}

void e2b_process_state::detach()
{
    asio::dispatch(strand, [self = shared_from_this()] {
        self->released = true;
        self->stop_reader();
    });
}

asio::awaitable<result<std::optional<process_exit>>> e2b_process_state::wait_exit(
    std::optional<std::chrono::milliseconds> timeout)
{
    auto self = shared_from_this();
    auto op = [self, timeout]() -> asio::awaitable<result<std::optional<process_exit>>> {
        co_await asio::this_coro::throw_if_cancelled(false);
        if (self->exit) co_return std::optional<process_exit>(*self->exit);
        if (self->released)
            co_return error(errc::invalid_argument, "the process handle was released", {"process.wait"});
        asio::steady_timer t(self->strand);
        if (timeout)
            t.expires_after(*timeout);
        else
            t.expires_at(asio::steady_timer::time_point::max());
        if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none)
            co_return error(errc::cancelled, "wait was cancelled; the process keeps running", {"process.wait"});
        self->waiters.push_back(&t);
        auto [ec] = co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
        std::erase(self->waiters, &t);
        if (self->exit) co_return std::optional<process_exit>(*self->exit);
        if (!ec) co_return std::optional<process_exit>();
        co_return error(errc::cancelled, "wait was cancelled; the process keeps running", {"process.wait"});
    };
    co_return co_await asio::co_spawn(strand, std::move(op), asio::use_awaitable);
}

namespace {

/// Thread safety: every operation hops onto the state's strand.
class e2b_process_handle final : public process_handle {
public:
    explicit e2b_process_handle(std::shared_ptr<e2b_process_state> s) : s_(std::move(s)) {}
    ~e2b_process_handle() override { s_->detach(); }

    std::uint32_t pid() const noexcept override { return s_->pid; }
    std::string const& ref() const noexcept override { return s_->ref; }

protected:
    // The public async_x operations: each runs its coroutine below on the sandbox's executor.
    void do_write(std::string bytes, completion_handler<void> h) override
    {
        spawn(write(std::move(bytes)), std::move(h));
    }
    void do_close_stdin(completion_handler<void> h) override { spawn(close_stdin(), std::move(h)); }
    void do_signal(process_signal sig, completion_handler<void> h) override { spawn(signal(sig), std::move(h)); }
    void do_kill(completion_handler<void> h) override { spawn(kill(), std::move(h)); }
    void do_release(completion_handler<void> h) override { spawn(release(), std::move(h)); }
    void do_wait(std::optional<std::chrono::milliseconds> timeout, completion_handler<process_exit> h) override
    {
        spawn(wait(timeout), std::move(h));
    }

private:
    template <class T>
    void spawn(asio::awaitable<result<T>> body, completion_handler<T> h)
    {
        spawn_op(s_->core->executor, std::move(body), std::move(h));
    }

    asio::awaitable<result<void>> write(std::string bytes)
    {
        auto s = s_;
        auto op = [s, bytes = std::move(bytes)]() mutable -> asio::awaitable<result<void>> {
            if (auto r = usable(*s, "process.write"); !r) co_return r.error();
            auto t = s->core->activity_target("process.write");
            if (!t) co_return t.error();
            co_return co_await s->core->client->send_stdin(*t, pid_selector(s->pid), std::move(bytes));
        };
        co_return co_await on_strand(std::move(op));
    }

    asio::awaitable<result<void>> close_stdin()
    {
        auto s = s_;
        auto op = [s]() -> asio::awaitable<result<void>> {
            if (auto r = usable(*s, "process.close_stdin"); !r) co_return r.error();
            auto t = s->core->activity_target("process.close_stdin");
            if (!t) co_return t.error();
            co_return co_await s->core->client->close_stdin(*t, pid_selector(s->pid));
        };
        co_return co_await on_strand(std::move(op));
    }

    asio::awaitable<result<void>> signal(process_signal sig)
    {
        auto s = s_;
        auto op = [s, sig]() -> asio::awaitable<result<void>> {
            if (auto r = usable(*s, "process.signal"); !r) co_return r.error();
            auto t = s->core->activity_target("process.signal");
            if (!t) co_return t.error();
            if (sig == process_signal::sigkill) s->kill_requested = true;
            co_return co_await s->core->client->send_signal(*t, pid_selector(s->pid), sig);
        };
        co_return co_await on_strand(std::move(op));
    }

    asio::awaitable<result<void>> kill()
    {
        co_await asio::this_coro::throw_if_cancelled(false);
        auto s = s_;
        auto op = [s]() -> asio::awaitable<result<void>> {
            if (s->exit) co_return result<void>();
            if (s->released)
                co_return error(errc::invalid_argument, "the process handle was released", {"process.kill"});
            auto t = s->core->activity_target("process.kill");
            if (!t) co_return t.error();
            s->kill_requested = true;
            auto k = co_await s->core->client->send_signal(*t, pid_selector(s->pid), process_signal::sigkill);
            if (!k && k.error() != errc::not_found) {
                s->kill_requested = false;
                co_return k.error();
            }
            co_return result<void>();
        };
        auto r = co_await on_strand(std::move(op));
        if (!r) co_return r;
        // Give the reader a moment to see the end event, then stop it either way.
        auto w = co_await s->wait_exit(
            std::min<std::chrono::milliseconds>(s->core->limits.stop_grace, std::chrono::milliseconds(3000)));
        auto op2 = [s]() -> asio::awaitable<result<void>> {
            s->stop_reader();
            if (!s->exit) {
                process_exit e;
                e.outcome = exit_outcome::killed;
                e.status = "signal: killed";
                s->finish(std::move(e));
            }
            co_return result<void>();
        };
        co_await on_strand(std::move(op2));
        (void)w;
        co_return result<void>();
    }

    asio::awaitable<result<void>> release()
    {
        auto s = s_;
        auto op = [s]() -> asio::awaitable<result<void>> {
            s->released = true;
            s->stop_reader();
            co_return result<void>();
        };
        co_return co_await on_strand(std::move(op));
    }

    asio::awaitable<result<process_exit>> wait(std::optional<std::chrono::milliseconds> timeout)
    {
        auto r = co_await s_->wait_exit(timeout);
        if (!r) co_return r.error();
        if (!*r) co_return error(errc::timed_out, "the process is still running", {"process.wait"});
        co_return std::move(**r);
    }

private:
    static result<void> usable(e2b_process_state const& s, char const* op)
    {
        if (s.released) return error(errc::invalid_argument, "the process handle was released", {op});
        return {};
    }

    // Not a coroutine on purpose: g++ 12 destroys a lambda temporary passed to
    // a coroutine inside co_await twice.
    template <class F>
    asio::awaitable<result<void>> on_strand(F f)
    {
        return asio::co_spawn(s_->strand, std::move(f), asio::use_awaitable);
    }

    std::shared_ptr<e2b_process_state> s_;
};

}  // namespace

std::unique_ptr<process_handle> make_process_handle(std::shared_ptr<e2b_process_state> state)
{
    return std::make_unique<e2b_process_handle>(std::move(state));
}

}  // namespace prism_e2b::detail
