// sandbox_files over e2b::client: every path goes through the workspace rules
// (workspace_path.hpp) and the sandbox's activity gate (paused: errc::paused)
// before the one vendor call it maps to.
#include "adapter/files.hpp"

#include "adapter/workspace_path.hpp"
#include "core/spawn_op.hpp"

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace asio = boost::asio;

namespace prism_e2b::detail {

namespace {

file_kind to_kind(e2b::file_type t)
{
    switch (t) {
        case e2b::file_type::file:
            return file_kind::file;
        case e2b::file_type::directory:
            return file_kind::directory;
        case e2b::file_type::symlink:
            return file_kind::symlink;
        case e2b::file_type::unspecified:
            break;
    }
    return file_kind::other;
}

file_entry to_entry(e2b::entry_info e)
{
    file_entry out;
    out.name = std::move(e.name);
    out.path = std::move(e.path);
    out.kind = to_kind(e.type);
    out.size = e.size;
    out.mode = e.mode;
    out.modified_time = std::move(e.modified_time);
    out.symlink_target = std::move(e.symlink_target);
    return out;
}

file_event::kind to_kind(e2b::fs_event_type t)
{
    switch (t) {
        case e2b::fs_event_type::create:
            return file_event::kind::create;
        case e2b::fs_event_type::write:
            return file_event::kind::write;
        case e2b::fs_event_type::remove:
            return file_event::kind::remove;
        case e2b::fs_event_type::rename:
            return file_event::kind::rename;
        case e2b::fs_event_type::chmod:
            return file_event::kind::chmod;
        case e2b::fs_event_type::unspecified:
            break;
    }
    return file_event::kind::other;
}

/// A watch of the e2b client, its events in the contract's terms.
class e2b_file_watch final : public file_watch {
public:
    e2b_file_watch(asio::any_io_executor ex, std::unique_ptr<e2b::watch_event_stream> s)
        : ex_(std::move(ex)), stream_(std::move(s))
    {
    }
    void close() noexcept override { stream_->close(); }

protected:
    void do_next(completion_handler<std::optional<file_event>> h) override { spawn_op(ex_, next(), std::move(h)); }

private:
    asio::awaitable<result<std::optional<file_event>>> next()
    {
        // A cancellation emitted before this read began only marked the state: it still closes the watch.
        co_await asio::this_coro::throw_if_cancelled(false);
        if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) {
            stream_->close();
            co_return error(errc::cancelled, "the watch was cancelled", {"files.watch"});
        }
        auto ev = co_await stream_->async_next(asio::use_awaitable);
        if (!ev) co_return ev.error();
        if (!*ev) co_return std::nullopt;
        file_event out;
        out.what = to_kind((*ev)->type);
        out.name = std::move((*ev)->name);
        if ((*ev)->entry) out.entry = to_entry(std::move(*(*ev)->entry));
        co_return std::optional<file_event>(std::move(out));
    }

    asio::any_io_executor ex_;
    std::unique_ptr<e2b::watch_event_stream> stream_;
};

class e2b_files final : public sandbox_files {
public:
    explicit e2b_files(std::shared_ptr<e2b_sandbox_core> core) : core_(std::move(core))
    {
        // Both were validated as absolute paths when the sandbox was made.
        workdir_ = normalize_absolute(core_->workdir).value();
    }

protected:
    void do_read_file(std::string path, completion_handler<std::string> h) override
    {
        spawn_op(core_->executor, read_file(std::move(path)), std::move(h));
    }
    void do_write_file(std::string path, std::string data, completion_handler<file_entry> h) override
    {
        spawn_op(core_->executor, write_file(std::move(path), std::move(data)), std::move(h));
    }
    void do_list_dir(std::string path, std::uint32_t depth, completion_handler<std::vector<file_entry>> h) override
    {
        spawn_op(core_->executor, list_dir(std::move(path), depth), std::move(h));
    }
    void do_stat(std::string path, completion_handler<file_entry> h) override
    {
        spawn_op(core_->executor, stat(std::move(path)), std::move(h));
    }
    void do_remove(std::string path, completion_handler<void> h) override
    {
        spawn_op(core_->executor, remove(std::move(path)), std::move(h));
    }
    void do_watch(std::string path, bool recursive, completion_handler<std::unique_ptr<file_watch>> h) override
    {
        spawn_op(core_->executor, watch(std::move(path), recursive), std::move(h));
    }

private:
    /// Where an operation's path leads, and the envd target to go there with:
    /// the path rules first, then the activity gate, both before any vendor call.
    struct call_target {
        std::string path;
        e2b::envd_target target;
    };
    result<call_target> prepare(std::string const& path, char const* operation) const
    {
        auto p = resolve_workspace_path(path, workdir_, core_->file_roots, operation);
        if (!p) return p.error();
        auto t = core_->activity_target(operation);
        if (!t) return t.error();
        return call_target{std::move(*p), std::move(*t)};
    }

    asio::awaitable<result<std::string>> read_file(std::string path)
    {
        auto c = prepare(path, "files.read_file");
        if (!c) co_return c.error();
        co_return co_await core_->client->async_read_file(std::move(c->target), std::move(c->path));
    }

    asio::awaitable<result<file_entry>> write_file(std::string path, std::string data)
    {
        auto c = prepare(path, "files.write_file");
        if (!c) co_return c.error();
        auto r = co_await core_->client->async_write_file(std::move(c->target), std::move(c->path), std::move(data));
        if (!r) co_return r.error();
        co_return to_entry(std::move(*r));
    }

    asio::awaitable<result<std::vector<file_entry>>> list_dir(std::string path, std::uint32_t depth)
    {
        if (depth == 0) co_return error(errc::invalid_argument, "depth must be at least 1", {"files.list_dir"});
        auto c = prepare(path, "files.list_dir");
        if (!c) co_return c.error();
        auto r = co_await core_->client->async_list_dir(std::move(c->target), std::move(c->path), depth);
        if (!r) co_return r.error();
        std::vector<file_entry> out;
        out.reserve(r->size());
        for (auto& e : *r) out.push_back(to_entry(std::move(e)));
        co_return out;
    }

    asio::awaitable<result<file_entry>> stat(std::string path)
    {
        auto c = prepare(path, "files.stat");
        if (!c) co_return c.error();
        auto r = co_await core_->client->async_stat(std::move(c->target), std::move(c->path));
        if (!r) co_return r.error();
        co_return to_entry(std::move(*r));
    }

    asio::awaitable<result<void>> remove(std::string path)
    {
        auto c = prepare(path, "files.remove");
        if (!c) co_return c.error();
        // The workspace itself (and an allowed root) is where the rules start, never a target.
        if (c->path == workdir_ ||
            std::find(core_->file_roots.begin(), core_->file_roots.end(), c->path) != core_->file_roots.end())
            co_return error(errc::permission_denied, "the workdir and the allowed roots cannot be removed",
                            {"files.remove"});
        co_return co_await core_->client->async_remove(std::move(c->target), std::move(c->path));
    }

    asio::awaitable<result<std::unique_ptr<file_watch>>> watch(std::string path, bool recursive)
    {
        auto c = prepare(path, "files.watch");
        if (!c) co_return c.error();
        e2b::watch_dir_params params;
        params.path = std::move(c->path);
        params.recursive = recursive;
        params.include_entry = true;
        auto s = co_await core_->client->async_watch_dir(std::move(c->target), std::move(params), asio::use_awaitable);
        if (!s) co_return s.error();
        co_return std::unique_ptr<file_watch>(std::make_unique<e2b_file_watch>(core_->executor, std::move(*s)));
    }

    std::shared_ptr<e2b_sandbox_core> core_;
    std::string workdir_;  ///< normalised
};

}  // namespace

std::unique_ptr<sandbox_files> make_e2b_files(std::shared_ptr<e2b_sandbox_core> core)
{
    return std::make_unique<e2b_files>(std::move(core));
}

}  // namespace prism_e2b::detail
