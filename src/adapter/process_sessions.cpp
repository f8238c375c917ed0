// process_sessions: owner-checked registry of long-running processes with
// cursor-paged output, over any disposable_sandbox that offers processes.
#include <prism_e2b/process_sessions.hpp>

#include "core/spawn_op.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <map>
#include <mutex>

namespace asio = boost::asio;

namespace prism_e2b {

namespace detail {

struct process_session {
    std::string id;
    std::string owner;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

    // Set once when the handle exists; the handle itself is thread-safe.
    std::shared_ptr<process_handle> handle;
    std::string ref;
    std::uint32_t pid = 0;

    mutable std::mutex mu;  // guards the fields below
    std::string buffer;
    std::uint64_t base = 0;  ///< absolute offset of buffer[0]
    std::uint64_t dropped = 0;
    std::optional<process_exit> exit;

    std::shared_ptr<asio::cancellation_signal> watcher;  // registry strand only
};

/// Thread safety: `mu` guards the map and the reservation count; each session
/// guards its output with its own mutex; watchers live on `strand`.
struct process_sessions_state : std::enable_shared_from_this<process_sessions_state> {
    asio::any_io_executor executor;
    asio::strand<asio::any_io_executor> strand;
    std::shared_ptr<disposable_sandbox> sandbox;
    process_capable* procs = nullptr;
    process_session_limits limits;
    std::shared_ptr<process_recovery_backend> recovery;

    mutable std::mutex mu;
    std::map<std::string, std::shared_ptr<process_session>> sessions;
    std::size_t reserved = 0;
    std::uint64_t next_id = 1;

    process_sessions_state(asio::any_io_executor ex) : executor(ex), strand(asio::make_strand(ex)) {}

    result<void> reserve()
    {
        std::lock_guard lk(mu);
        if (sessions.size() + reserved >= limits.max_sessions)
            return error(errc::limit_exceeded,
                         "too many process sessions (max_sessions " + std::to_string(limits.max_sessions) + ")",
                         {"process_sessions"});
        ++reserved;
        return {};
    }
    void unreserve()
    {
        std::lock_guard lk(mu);
        --reserved;
    }

    result<std::shared_ptr<process_session>> find(std::string const& owner, std::string const& id, char const* op) const
    {
        std::lock_guard lk(mu);
        auto it = sessions.find(id);
        if (it == sessions.end()) return error(errc::not_found, "no such process session", {op});
        if (it->second->owner != owner)
            return error(errc::wrong_owner, "the process session belongs to another owner", {op});
        return it->second;
    }

    output_callback make_sink(std::weak_ptr<process_session> ws)
    {
        auto const cap = limits.max_total_output;
        return [ws, cap](output_stream, std::string_view data) {
            auto s = ws.lock();
            if (!s) return;
            std::lock_guard lk(s->mu);
            s->buffer.append(data);
            if (s->buffer.size() > cap) {
                // Drop the oldest bytes in bulk (amortised): keep at most 3/4 of the cap.
                auto const keep = std::max<std::uint64_t>(cap - cap / 4, 1);
                auto const drop = s->buffer.size() - std::min<std::uint64_t>(keep, s->buffer.size());
                s->buffer.erase(0, drop);
                s->base += drop;
                s->dropped += drop;
            }
        };
    }

    static void record_exit(process_session& s, process_exit const& e)
    {
        std::lock_guard lk(s.mu);
        if (!s.exit) s.exit = e;
    }

    // Follows one session: records the exit and enforces max_lifetime.
    static asio::awaitable<void> watch(std::shared_ptr<process_session> s, std::chrono::milliseconds lifetime)
    {
        co_await asio::this_coro::throw_if_cancelled(false);
        auto const left = lifetime - std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - s->started);
        auto r = co_await s->handle->async_wait(std::max(left, std::chrono::milliseconds(1)));
        if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) co_return;
        if (r) {
            record_exit(*s, *r);
            co_return;
        }
        if (r.error() != errc::timed_out) co_return;
        // Lifetime over: stop the process; kill() returns once its end is
        // recorded, so the wait below only reads it.
        if (auto k = co_await s->handle->async_kill(); !k) co_return;
        auto w = co_await s->handle->async_wait(std::chrono::milliseconds(0));
        if (w) record_exit(*s, *w);
    }

    void start_watcher(std::shared_ptr<process_session> s)
    {
        asio::dispatch(strand, [self = shared_from_this(), s] {
            auto sig = std::make_shared<asio::cancellation_signal>();
            s->watcher = sig;
            asio::co_spawn(self->strand, watch(s, self->limits.max_lifetime),
                           asio::bind_cancellation_slot(sig->slot(), [sig](std::exception_ptr) {}));
        });
    }

    void stop_watcher(std::shared_ptr<process_session> s)
    {
        asio::dispatch(strand, [s] {
            if (auto sig = std::exchange(s->watcher, nullptr)) sig->emit(asio::cancellation_type::terminal);
        });
    }

    result<std::string> add(std::shared_ptr<process_session> s)
    {
        std::lock_guard lk(mu);
        --reserved;
        s->id = "ps-" + std::to_string(next_id++);
        sessions.emplace(s->id, s);
        return s->id;
    }
};

}  // namespace detail

result<std::shared_ptr<process_sessions>> process_sessions::create(asio::any_io_executor executor,
                                                                   process_sessions_options options)
{
    if (!options.sandbox)
        return error(errc::invalid_argument, "process_sessions needs a sandbox", {"process_sessions"});
    auto* procs = options.sandbox->processes();
    if (!procs) return error(errc::unsupported, "the sandbox does not support processes", {"process_sessions"});
    if (auto v = options.limits.validate(); !v) return v.error();
    auto st = std::make_shared<detail::process_sessions_state>(std::move(executor));
    st->sandbox = std::move(options.sandbox);
    st->procs = procs;
    st->limits = options.limits;
    st->recovery = std::move(options.recovery);
    return std::shared_ptr<process_sessions>(new process_sessions(std::move(st)));
}

process_sessions::process_sessions(std::shared_ptr<detail::process_sessions_state> state) : state_(std::move(state)) {}

process_sessions::~process_sessions()
{
    std::map<std::string, std::shared_ptr<detail::process_session>> all;
    {
        std::lock_guard lk(state_->mu);
        all.swap(state_->sessions);
    }
    for (auto& [id, s] : all) state_->stop_watcher(s);
}

asio::awaitable<result<std::string>> process_sessions::start(std::string owner, process_request req)
{
    auto st = state_;
    if (owner.empty())
        co_return error(errc::invalid_argument, "a session owner is required", {"process_sessions.start"});
    if (auto r = st->reserve(); !r) co_return r.error();
    auto s = std::make_shared<detail::process_session>();
    s->owner = std::move(owner);
    auto user_cb = std::move(req.on_data);
    auto sink = st->make_sink(s);
    req.on_data = [sink, user_cb](output_stream which, std::string_view data) {
        sink(which, data);
        if (user_cb) user_cb(which, data);
    };
    auto h = co_await st->procs->async_start_process(std::move(req));
    if (!h) {
        st->unreserve();
        co_return h.error();
    }
    s->handle = std::shared_ptr<process_handle>(std::move(*h));
    s->ref = s->handle->ref();
    s->pid = s->handle->pid();
    auto id = st->add(s);
    st->start_watcher(s);
    co_return id;
}

asio::awaitable<result<std::string>> process_sessions::attach(std::string owner, std::string ref)
{
    auto st = state_;
    if (owner.empty())
        co_return error(errc::invalid_argument, "a session owner is required", {"process_sessions.attach"});
    if (auto r = st->reserve(); !r) co_return r.error();
    auto s = std::make_shared<detail::process_session>();
    s->owner = std::move(owner);
    std::unique_ptr<process_handle> h;
    if (st->recovery) {
        auto r = co_await st->recovery->async_attach(std::move(ref), st->make_sink(s));
        if (r) h = std::move(*r);  // an error (cancellation) reads as "cannot be attested"
    } else {
        auto r = co_await st->procs->async_attach_process(std::move(ref), st->make_sink(s));
        if (!r) {
            st->unreserve();
            co_return r.error();
        }
        h = std::move(*r);
    }
    if (!h) {
        st->unreserve();
        co_return error(errc::not_found, "the process cannot be attached (gone or not attested)",
                        {"process_sessions.attach"});
    }
    s->handle = std::shared_ptr<process_handle>(std::move(h));
    s->ref = s->handle->ref();
    s->pid = s->handle->pid();
    auto id = st->add(s);
    st->start_watcher(s);
    co_return id;
}

result<process_output_page> process_sessions::output(std::string const& owner, std::string const& id,
                                                     std::uint64_t cursor, std::optional<std::uint64_t> max_bytes) const
{
    auto s = state_->find(owner, id, "process_sessions.output");
    if (!s) return s.error();
    auto const limit =
        std::min<std::uint64_t>(max_bytes.value_or(state_->limits.max_output_chunk), state_->limits.max_output_chunk);
    std::lock_guard lk((*s)->mu);
    auto const& sess = **s;
    auto const end = sess.base + sess.buffer.size();
    if (cursor > end) return error(errc::invalid_argument, "cursor is beyond the output", {"process_sessions.output"});
    auto const from = std::max(cursor, sess.base);  // bytes before `base` were dropped
    auto const n = std::min<std::uint64_t>(limit, end - from);
    process_output_page page;
    page.data = sess.buffer.substr(from - sess.base, n);
    page.cursor = from + n;
    page.eof = sess.exit.has_value() && page.cursor == end;
    return page;
}

asio::awaitable<result<void>> process_sessions::input(std::string owner, std::string id, std::string bytes)
{
    auto s = state_->find(owner, id, "process_sessions.input");
    if (!s) co_return s.error();
    if (bytes.size() > state_->limits.max_input_write)
        co_return error(errc::limit_exceeded,
                        "input exceeds max_input_write (" + std::to_string(state_->limits.max_input_write) + ")",
                        {"process_sessions.input"});
    co_return co_await (*s)->handle->async_write(std::move(bytes));
}

asio::awaitable<result<void>> process_sessions::close_input(std::string owner, std::string id)
{
    auto s = state_->find(owner, id, "process_sessions.close_input");
    if (!s) co_return s.error();
    co_return co_await (*s)->handle->async_close_stdin();
}

asio::awaitable<result<process_exit>> process_sessions::wait(std::string owner, std::string id,
                                                             std::optional<std::chrono::milliseconds> timeout)
{
    auto s = state_->find(owner, id, "process_sessions.wait");
    if (!s) co_return s.error();
    {
        std::lock_guard lk((*s)->mu);
        if ((*s)->exit) co_return *(*s)->exit;
    }
    auto r = co_await (*s)->handle->async_wait(timeout);
    if (r) detail::process_sessions_state::record_exit(**s, *r);
    co_return r;
}

asio::awaitable<result<void>> process_sessions::signal(std::string owner, std::string id, process_signal sig)
{
    auto s = state_->find(owner, id, "process_sessions.signal");
    if (!s) co_return s.error();
    co_return co_await (*s)->handle->async_signal(sig);
}

asio::awaitable<result<void>> process_sessions::kill(std::string owner, std::string id)
{
    co_await asio::this_coro::throw_if_cancelled(false);
    auto s = state_->find(owner, id, "process_sessions.kill");
    if (!s) co_return s.error();
    auto r = co_await (*s)->handle->async_kill();
    if (r) {
        auto w = co_await (*s)->handle->async_wait(std::chrono::milliseconds(0));
        if (w) detail::process_sessions_state::record_exit(**s, *w);
    }
    co_return r;
}

asio::awaitable<result<void>> process_sessions::release(std::string owner, std::string id)
{
    auto s = state_->find(owner, id, "process_sessions.release");
    if (!s) co_return s.error();
    {
        std::lock_guard lk(state_->mu);
        state_->sessions.erase(id);
    }
    state_->stop_watcher(*s);
    co_return co_await (*s)->handle->async_release();
}

// ---- the public async_x operations: each runs its coroutine on the registry's executor

void process_sessions::do_start(std::string owner, process_request req, completion_handler<std::string> h)
{
    detail::spawn_op(state_->executor, start(std::move(owner), std::move(req)), std::move(h));
}

void process_sessions::do_attach(std::string owner, std::string ref, completion_handler<std::string> h)
{
    detail::spawn_op(state_->executor, attach(std::move(owner), std::move(ref)), std::move(h));
}

void process_sessions::do_input(std::string owner, std::string id, std::string bytes, completion_handler<void> h)
{
    detail::spawn_op(state_->executor, input(std::move(owner), std::move(id), std::move(bytes)), std::move(h));
}

void process_sessions::do_close_input(std::string owner, std::string id, completion_handler<void> h)
{
    detail::spawn_op(state_->executor, close_input(std::move(owner), std::move(id)), std::move(h));
}

void process_sessions::do_wait(std::string owner, std::string id, std::optional<std::chrono::milliseconds> timeout,
                               completion_handler<process_exit> h)
{
    detail::spawn_op(state_->executor, wait(std::move(owner), std::move(id), timeout), std::move(h));
}

void process_sessions::do_signal(std::string owner, std::string id, process_signal sig, completion_handler<void> h)
{
    detail::spawn_op(state_->executor, signal(std::move(owner), std::move(id), sig), std::move(h));
}

void process_sessions::do_kill(std::string owner, std::string id, completion_handler<void> h)
{
    detail::spawn_op(state_->executor, kill(std::move(owner), std::move(id)), std::move(h));
}

void process_sessions::do_release(std::string owner, std::string id, completion_handler<void> h)
{
    detail::spawn_op(state_->executor, release(std::move(owner), std::move(id)), std::move(h));
}

result<process_session_info> process_sessions::info(std::string const& owner, std::string const& id) const
{
    auto s = state_->find(owner, id, "process_sessions.info");
    if (!s) return s.error();
    process_session_info i;
    i.id = (*s)->id;
    i.owner = (*s)->owner;
    i.ref = (*s)->ref;
    i.pid = (*s)->pid;
    std::lock_guard lk((*s)->mu);
    i.exit = (*s)->exit;
    i.dropped_bytes = (*s)->dropped;
    return i;
}

std::size_t process_sessions::size() const
{
    std::lock_guard lk(state_->mu);
    return state_->sessions.size();
}

}  // namespace prism_e2b
