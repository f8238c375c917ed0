// The background reader of a long-running process and its process_handle:
// they report stream events to the sandbox's fsm and perform its actions.
#include "adapter/process_state.hpp"

#include "core/spawn_op.hpp"
#include "protocol/on_strand.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace asio = boost::asio;

namespace prism_e2b::detail {

// ---- e2b_sandbox_core: the parts that touch processes --------------------------

result<e2b::envd_target> e2b_sandbox_core::activity_target(std::string_view operation)
{
    std::lock_guard lk(mu);
    auto t = fsm.activity(operation);
    if (t) last_activity = std::chrono::system_clock::now();
    return t;
}

void e2b_sandbox_core::perform(process_effects const& effects)
{
    std::vector<std::pair<std::shared_ptr<e2b_process_state>, process_actions>> todo;
    {
        std::lock_guard lk(mu);
        for (auto const& [key, a] : effects) {
            auto it = followed.find(key);
            if (it == followed.end()) continue;
            if (auto p = it->second.lock()) todo.emplace_back(std::move(p), a);
        }
    }
    // Outside the lock: dropping the last reference removes the process from the fsm.
    for (auto& [p, a] : todo) p->perform(a);
}

process_key e2b_sandbox_core::follow(std::uint32_t pid, std::shared_ptr<e2b_process_state> const& p)
{
    std::lock_guard lk(mu);
    auto const key = fsm.process_added(pid);
    followed.emplace(key, p);
    return key;
}

// ---- e2b_process_state ------------------------------------------------------------

e2b_process_state::e2b_process_state(std::shared_ptr<e2b_sandbox_core> c, std::uint32_t p, std::string r,
                                     output_callback cb)
    : core(std::move(c)), pid(p), ref(std::move(r)), on_data(std::move(cb))
{
}

e2b_process_state::~e2b_process_state()
{
    if (key == 0) return;
    std::lock_guard lk(core->mu);
    core->fsm.process_removed(key);
    core->followed.erase(key);
}

process_fsm e2b_process_state::snapshot() const
{
    std::lock_guard lk(core->mu);
    return core->fsm.process(key);
}

namespace {

void start_reader(std::shared_ptr<e2b_process_state> const& self, std::unique_ptr<e2b::process_event_stream> stream);

// The reader or re-attach owning `sig` is ending: it no longer owns the
// process's I/O, so an action the fsm returns now (a re-attach) may start.
// Before the transition, so no action finds the old owner still in place.
void disown(e2b_process_state& self, std::shared_ptr<asio::cancellation_signal> const& sig)
{
    if (self.reader_cancel == sig) self.reader_cancel.reset();
}

// Follows the stream until the end event, a break or cancellation. Runs on the strand.
asio::awaitable<void> read_events(std::shared_ptr<e2b_process_state> self,
                                  std::unique_ptr<e2b::process_event_stream> stream,
                                  std::shared_ptr<asio::cancellation_signal> sig)
{
    co_await asio::this_coro::throw_if_cancelled(false);
    auto& core = *self->core;
    auto const cancelled = [&]() -> asio::awaitable<bool> {
        co_return (co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none;
    };
    for (;;) {
        if (co_await cancelled()) co_return;  // emitted while no read was pending
        auto r = co_await stream->async_next();
        if (co_await cancelled()) co_return;
        if (!r || !*r) {
            auto why = !r ? r.error().message() : std::string("stream ended without an end event");
            disown(*self, sig);
            self->perform(core.transition([&](sandbox_fsm& f) { return f.stream_broken(self->key, std::move(why)); }));
            co_return;
        }
        auto& ev = **r;
        if (auto* d = std::get_if<e2b::data_event>(&ev)) {
            if (!self->on_data || d->bytes.empty()) continue;
            bool accepts = false;
            {
                std::lock_guard lk(core.mu);
                accepts = core.fsm.process(self->key).accepts_data();
            }
            if (accepts)
                self->on_data(d->stream == e2b::data_event::stream_kind::stderr_data ? output_stream::stderr_stream
                                                                                     : output_stream::stdout_stream,
                              d->bytes);
        } else if (auto* end = std::get_if<e2b::end_event>(&ev)) {
            disown(*self, sig);
            self->perform(core.transition([&](sandbox_fsm& f) { return f.end_event(self->key, *end); }));
            co_return;
        }
    }
}

// Connects to the process again after a pause cut its stream. Runs on the strand.
asio::awaitable<void> reattach(std::shared_ptr<e2b_process_state> self, std::shared_ptr<asio::cancellation_signal> sig)
{
    co_await asio::this_coro::throw_if_cancelled(false);
    auto& core = *self->core;
    auto target = core.activity_target("process.reattach");
    if (!target) {
        // Paused (or killed) again: the fsm waits for the next resume.
        disown(*self, sig);
        self->perform(core.transition([&](sandbox_fsm& f) { return f.reattach_failed(self->key, "not running"); }));
        co_return;
    }
    auto s =
        co_await core.client->async_connect_process(*target, pid_selector(self->pid), std::chrono::milliseconds(0));
    if (self->reader_cancel != sig) co_return;  // stopped (release, gone) meanwhile
    disown(*self, sig);                         // this re-attach hands over to the reader
    if (!s) {
        auto why = s.error() == errc::not_found ? std::string("process is gone") : s.error().message();
        self->perform(core.transition([&](sandbox_fsm& f) { return f.reattach_failed(self->key, std::move(why)); }));
        co_return;
    }
    auto a = core.transition([&](sandbox_fsm& f) { return f.reattached(self->key); });
    if (a.stop_reader) {
        (*s)->close();
        co_return;
    }
    start_reader(self, std::move(*s));
}

// Runs `op` on the strand, owned through reader_cancel (call on the strand):
// stop_reader() cancels it, whether it reads or re-attaches.
void spawn_owned(std::shared_ptr<e2b_process_state> const& self, std::shared_ptr<asio::cancellation_signal> sig,
                 asio::awaitable<void> op)
{
    self->reader_cancel = sig;
    asio::co_spawn(self->core->strand, std::move(op),
                   asio::bind_cancellation_slot(sig->slot(), [self, sig](std::exception_ptr) {
                       // Completion runs on the strand: the reader is done.
                       if (self->reader_cancel == sig) self->reader_cancel.reset();
                   }));
}

void stop_reader(e2b_process_state& self)
{
    if (auto sig = std::exchange(self.reader_cancel, nullptr)) sig->emit(asio::cancellation_type::terminal);
}

void start_reader(std::shared_ptr<e2b_process_state> const& self, std::unique_ptr<e2b::process_event_stream> stream)
{
    stop_reader(*self);
    auto sig = std::make_shared<asio::cancellation_signal>();
    spawn_owned(self, sig, read_events(self, std::move(stream), sig));
}

}  // namespace

asio::awaitable<void> e2b_process_state::follow(std::shared_ptr<e2b_process_state> self,
                                                std::unique_ptr<e2b::process_event_stream> stream)
{
    self->key = self->core->follow(self->pid, self);
    // A named lambda: g++ 12 destroys lambda/braced temporaries of a co_await
    // full-expression twice.
    auto begin_reading = [self, s = std::move(stream)]() mutable -> asio::awaitable<void> {
        start_reader(self, std::move(s));
        co_return;
    };
    co_await protocol::on_strand(self->core->strand, std::move(begin_reading));
}

void e2b_process_state::perform(process_actions a)
{
    if (!a.stop_reader && !a.reattach) return;
    asio::dispatch(core->strand, [self = shared_from_this(), a] {
        if (a.stop_reader) stop_reader(*self);
        if (a.reattach && !self->reader_cancel) {
            auto sig = std::make_shared<asio::cancellation_signal>();
            spawn_owned(self, sig, reattach(self, sig));
        }
    });
}

asio::awaitable<result<std::optional<process_exit>>> e2b_process_state::wait_exit(
    std::optional<std::chrono::milliseconds> timeout)
{
    co_await asio::this_coro::throw_if_cancelled(false);  // a cancelled wait is errc::cancelled
    using clock = state_waiters::clock;
    std::optional<clock::time_point> deadline;
    if (timeout) deadline = clock::now() + *timeout;
    auto self = shared_from_this();
    auto op = [self, deadline]() -> asio::awaitable<result<std::optional<process_exit>>> {
        auto settled = [&] {
            auto p = self->snapshot();
            return p.terminal() || p.phase() == process_phase::released;
        };
        auto w = co_await self->core->changes.wait_until(settled, deadline);
        auto p = self->snapshot();
        if (p.exit()) co_return std::optional<process_exit>(*p.exit());
        if (p.phase() == process_phase::released)
            co_return error(errc::invalid_argument, "the process handle was released", {"process.wait"});
        if (w == wait_outcome::deadline_passed) co_return std::optional<process_exit>();
        co_return error(errc::cancelled, "wait was cancelled; the process keeps running", {"process.wait"});
    };
    co_return co_await protocol::on_strand(core->strand, std::move(op));
}

namespace {

/// Thread safety: every operation may run on any thread; lifecycle state
/// lives in the sandbox's fsm.
class e2b_process_handle final : public process_handle {
public:
    explicit e2b_process_handle(std::shared_ptr<e2b_process_state> s) : s_(std::move(s)) {}
    ~e2b_process_handle() override { release_now(); }

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
        auto t = target(*s, "process.write");
        if (!t) co_return t.error();
        co_return co_await s->core->client->async_send_stdin(*t, pid_selector(s->pid), std::move(bytes));
    }

    asio::awaitable<result<void>> close_stdin()
    {
        auto s = s_;
        auto t = target(*s, "process.close_stdin");
        if (!t) co_return t.error();
        co_return co_await s->core->client->async_close_stdin(*t, pid_selector(s->pid));
    }

    asio::awaitable<result<void>> signal(process_signal sig)
    {
        auto s = s_;
        auto t = target(*s, "process.signal");
        if (!t) co_return t.error();
        if (sig == process_signal::sigkill) s->core->transition([&](sandbox_fsm& f) { f.kill_sent(s->key); });
        co_return co_await s->core->client->async_send_signal(*t, pid_selector(s->pid), sig);
    }

    asio::awaitable<result<void>> kill()
    {
        co_await asio::this_coro::throw_if_cancelled(false);
        auto s = s_;
        auto& core = *s->core;
        if (s->snapshot().terminal()) co_return result<void>();
        auto t = target(*s, "process.kill");
        if (!t) co_return t.error();
        core.transition([&](sandbox_fsm& f) { f.kill_sent(s->key); });
        auto k = co_await core.client->async_send_signal(*t, pid_selector(s->pid), process_signal::sigkill);
        if (!k && k.error() != errc::not_found) {
            core.transition([&](sandbox_fsm& f) { f.kill_failed(s->key); });
            co_return k.error();
        }
        // Wait for the reader to see the end, at most stop_grace; then record
        // "killed" ourselves (the process had SIGKILL).
        auto w = co_await s->wait_exit(core.limits.stop_grace);
        (void)w;
        s->perform(core.transition([&](sandbox_fsm& f) { return f.kill_grace_over(s->key); }));
        co_return result<void>();
    }

    asio::awaitable<result<void>> release()
    {
        release_now();
        co_return result<void>();
    }

    asio::awaitable<result<process_exit>> wait(std::optional<std::chrono::milliseconds> timeout)
    {
        auto r = co_await s_->wait_exit(timeout);
        if (!r) co_return r.error();
        if (!*r) co_return error(errc::timed_out, "the process is still running", {"process.wait"});
        co_return std::move(**r);
    }

private:
    // The envd target for an operation on a handle that was not released.
    static result<e2b::envd_target> target(e2b_process_state& s, char const* op)
    {
        if (auto r = s.snapshot().usable(op); !r) return r.error();
        return s.core->activity_target(op);
    }

    void release_now()
    {
        s_->perform(s_->core->transition([&](sandbox_fsm& f) { return f.released(s_->key); }));
    }

    std::shared_ptr<e2b_process_state> s_;
};

}  // namespace

std::unique_ptr<process_handle> make_process_handle(std::shared_ptr<e2b_process_state> state)
{
    return std::make_unique<e2b_process_handle>(std::move(state));
}

}  // namespace prism_e2b::detail
