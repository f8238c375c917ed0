// filesystem.Filesystem's watchers (envd_watch.hpp): WatchDir, a server stream of
// inotify events for a directory of the sandbox (optionally recursive), with start,
// filesystem and keepalive messages as envd sends them; and the polling watchers,
// whose events wait in their inotify queue for the next GetWatcherEvents.
#include "emulator/envd_watch.hpp"

#include "emulator/sandbox_fs.hpp"
#include "emulator/server_state.hpp"
#include "emulator/use_nothrow.hpp"
#include "protocol/envelope.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace asio::experimental::awaitable_operators;

/// The inotify watches of one watcher: descriptor -> path relative to the watched dir.
struct watch_set {
    int fd = -1;
    std::map<int, std::string> dirs;
    std::size_t limit = 8192;  // bounds a recursive watch of a huge tree
    std::string root_path;     // the watched directory, as the sandbox names it
    bool recursive = false;
    bool include_entry = false;

    void add(int dir_fd, std::string const& rel);
};

namespace {

constexpr std::uint32_t watch_mask =
    IN_CREATE | IN_MODIFY | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_ONLYDIR |
    IN_EXCL_UNLINK;  // follows only the /proc/self/fd link of an fd resolved in the root

std::string envelope_of(json::object const& o, std::uint8_t flags = 0)
{
    return wire::encode_envelope(json::serialize(o), flags);
}

json::object error_end(std::string const& code, std::string const& message)
{
    json::object e, o;
    e["code"] = code;
    e["message"] = message;
    o["error"] = std::move(e);
    return o;
}

}  // namespace

/// Adds a watch on the directory open as `dir_fd` (relative path `rel`), and below it when recursive.
void watch_set::add(int dir_fd, std::string const& rel)
{
    if (dirs.size() >= limit) return;
    std::string const proc = "/proc/self/fd/" + std::to_string(dir_fd);
    int const wd = ::inotify_add_watch(fd, proc.c_str(), watch_mask);
    if (wd < 0) return;
    dirs[wd] = rel;
    if (!recursive) return;
    int const dup = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dup < 0) return;
    DIR* d = ::fdopendir(dup);
    if (!d) {
        ::close(dup);
        return;
    }
    std::vector<std::string> subs;
    while (auto* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != ".." && e->d_type == DT_DIR) subs.push_back(std::move(n));
    }
    for (auto const& n : subs) {
        int sub = ::openat(::dirfd(d), n.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
            add(sub, rel.empty() ? n : rel + "/" + n);
            ::close(sub);
        }
    }
    ::closedir(d);
}

namespace {

char const* event_type(std::uint32_t mask)
{
    if (mask & (IN_CREATE | IN_MOVED_TO)) return "EVENT_TYPE_CREATE";
    if (mask & IN_MODIFY) return "EVENT_TYPE_WRITE";
    if (mask & IN_DELETE) return "EVENT_TYPE_REMOVE";
    if (mask & IN_MOVED_FROM) return "EVENT_TYPE_RENAME";
    if (mask & IN_ATTRIB) return "EVENT_TYPE_CHMOD";
    return nullptr;
}

/// Reads every event queued on ws (without blocking) and hands each FilesystemEvent to `emit`.
/// Returns true when the watched directory itself went away.
template <class Emit>
bool drain(sandbox const& sb, watch_set& ws, Emit emit)
{
    std::array<char, 16 * 1024> buf;
    bool gone = false;
    for (;;) {
        ssize_t const n = ::read(ws.fd, buf.data(), buf.size());
        if (n <= 0) break;
        for (std::size_t off = 0; off < static_cast<std::size_t>(n);) {
            auto const* ev = reinterpret_cast<inotify_event const*>(buf.data() + off);
            off += sizeof(inotify_event) + ev->len;
            auto const dir = ws.dirs.find(ev->wd);
            if (ev->mask & IN_IGNORED) {
                if (dir != ws.dirs.end() && dir->second.empty()) gone = true;  // the watched directory itself
                if (dir != ws.dirs.end()) ws.dirs.erase(dir);
                continue;
            }
            if (dir == ws.dirs.end() || ev->len == 0) continue;
            std::string const name = dir->second.empty() ? std::string(ev->name) : dir->second + "/" + ev->name;
            std::string const full = ws.root_path == "/" ? "/" + name : ws.root_path + "/" + name;
            if (ws.recursive && (ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
                unique_fd sub = open_in_root(sb.root_fd, full, O_PATH | O_DIRECTORY | O_NOFOLLOW);
                if (sub) ws.add(sub.get(), name);
            }
            if (char const* type = event_type(ev->mask)) {
                json::object fe;
                fe["name"] = name;
                fe["type"] = type;
                // As envd: the entry as it is now, when it still is (not after a remove or rename away).
                if (ws.include_entry && !(ev->mask & (IN_DELETE | IN_MOVED_FROM)))
                    if (auto entry = entry_info(sb, full)) fe["entry"] = std::move(*entry);
                emit(std::move(fe));
            }
        }
    }
    return gone;
}

char const* network_filesystem_name(long f_type) noexcept
{
    // linux/magic.h; CIFS and SMB2 have none there.
    switch (static_cast<unsigned long>(f_type) & 0xffffffffUL) {
        case 0x6969UL:
            return "nfs";
        case 0x517BUL:
            return "smb";
        case 0xFF534D42UL:
            return "cifs";
        case 0xFE534D42UL:
            return "smb2";
        case 0x65735546UL:
            return "fuse";
        default:
            return nullptr;
    }
}

/// A watcher's request fields (WatchDirRequest, CreateWatcherRequest) into ws, its inotify
/// watches added; the error to answer otherwise.
std::optional<json::object> open_watch(sandbox const& sb, json::object const& request, watch_set& ws)
{
    std::string raw;
    if (auto it = request.find("path"); it != request.end() && it->value().is_string())
        raw = std::string(it->value().as_string());
    auto flag = [&](char const* key) {
        auto it = request.find(key);
        return it != request.end() && it->value().is_bool() && it->value().as_bool();
    };
    ws.recursive = flag("recursive");
    ws.include_entry = flag("includeEntry");
    auto p = normalize_sandbox_path(raw);
    if (!p) return error_end("invalid_argument", "invalid path '" + raw + "': outside the sandbox");
    ws.root_path = *p;
    unique_fd dir = open_in_root(sb.root_fd, ws.root_path, O_PATH | O_DIRECTORY);
    if (!dir)
        return errno == ENOTDIR ? error_end("invalid_argument", "path '" + ws.root_path + "' is not a directory")
                                : error_end("not_found", "path '" + ws.root_path + "' does not exist");
    struct statfs fs {};
    if (::fstatfs(dir.get(), &fs) == 0 && !flag("allowNetworkMounts"))
        if (char const* net = network_filesystem_name(static_cast<long>(fs.f_type)))
            return error_end("failed_precondition", "path '" + ws.root_path + "' is on a network file system (" + net +
                                                        "): watching it needs allowNetworkMounts (its events may be "
                                                        "incomplete)");
    ws.fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (ws.fd < 0) return error_end("internal", "inotify is not available");
    ws.add(dir.get(), "");
    if (ws.dirs.empty()) return error_end("internal", "cannot watch '" + ws.root_path + "'");
    return std::nullopt;
}

asio::awaitable<void> watch_loop(std::shared_ptr<sandbox> sb, watch_set& ws, asio::posix::stream_descriptor& in,
                                 http_request const& req, response_sink& sink)
{
    auto const ex = co_await asio::this_coro::executor;
    auto const start = std::chrono::steady_clock::now();
    auto const timing = read_stream_timing(req, start);
    auto const deadline = timing.deadline;
    auto const keepalive = timing.keepalive;
    auto next_keepalive = keepalive ? std::optional(start + *keepalive) : std::nullopt;
    asio::steady_timer timer(ex);
    for (;;) {
        auto const now = std::chrono::steady_clock::now();
        if (deadline && now >= *deadline) {
            std::string last =
                envelope_of(error_end("deadline_exceeded", "the request deadline (Connect-Timeout-Ms) passed"),
                            wire::envelope_flag_end_stream);
            co_await sink.write_chunk(std::move(last));
            co_await sink.finish_stream();
            co_return;
        }
        if (next_keepalive && now >= *next_keepalive) {
            std::string ka = wire::encode_envelope(R"({"keepalive":{}})");
            bool const ok = co_await sink.write_chunk(std::move(ka));
            if (!ok) co_return;
            next_keepalive = now + *keepalive;
        }
        timer.expires_at(stream_wake_time(now, deadline, next_keepalive));
        auto which = co_await (in.async_wait(asio::posix::stream_descriptor::wait_read, use_nothrow) ||
                               timer.async_wait(use_nothrow));
        if (which.index() != 0) continue;
        std::string out;
        bool const gone = drain(*sb, ws, [&](json::object fe) {
            json::object o;
            o["filesystem"] = std::move(fe);
            out += envelope_of(o);
        });
        if (!out.empty()) {
            bool const ok = co_await sink.write_chunk(std::move(out));
            if (!ok) co_return;
        }
        if (gone) {
            std::string last = envelope_of(error_end("not_found", "the watched directory was removed"),
                                           wire::envelope_flag_end_stream);
            co_await sink.write_chunk(std::move(last));
            co_await sink.finish_stream();
            co_return;
        }
    }
}

}  // namespace

asio::awaitable<void> handle_watch_dir(std::shared_ptr<server_state>, std::shared_ptr<sandbox> sb, http_request req,
                                       response_sink& sink)
{
    std::optional<json::object> error;
    json::object request;
    {
        wire::envelope_decoder dec(1u << 20);
        std::vector<wire::envelope> envs;
        if (!dec.feed(req.body, envs) || dec.has_partial() || envs.empty() || envs.front().end_stream()) {
            error = error_end("invalid_argument", "malformed request envelope");
        } else {
            boost::system::error_code ec;
            auto v = json::parse(envs.front().payload, ec);
            if (ec || !v.is_object())
                error = error_end("invalid_argument", "request message is not a JSON object");
            else
                request = std::move(v.as_object());
        }
    }
    watch_set ws;
    if (!error) error = open_watch(*sb, request, ws);
    header_list none;
    bool ok = co_await sink.begin_stream(200, "application/connect+json", std::move(none));
    if (!ok) {
        if (ws.fd >= 0) ::close(ws.fd);
        co_return;
    }
    if (error) {
        std::string last = envelope_of(*error, wire::envelope_flag_end_stream);
        co_await sink.write_chunk(std::move(last));
        co_await sink.finish_stream();
        if (ws.fd >= 0) ::close(ws.fd);
        co_return;
    }
    asio::posix::stream_descriptor in(co_await asio::this_coro::executor, ws.fd);  // owns the fd from here
    std::string first = wire::encode_envelope(R"({"start":{}})");
    ok = co_await sink.write_chunk(std::move(first));
    if (!ok) co_return;
    co_await (watch_loop(sb, ws, in, req, sink) || sink.wait_peer_closed());
}

// ---------------------------------------------------------------- polling watchers

struct polling_watcher {
    std::mutex mutex;  ///< one GetWatcherEvents at a time reads its queue
    watch_set ws;
    bool gone = false;  ///< the watched directory went away
    polling_watcher() = default;
    polling_watcher(polling_watcher const&) = delete;
    polling_watcher& operator=(polling_watcher const&) = delete;
    ~polling_watcher()
    {
        if (ws.fd >= 0) ::close(ws.fd);
    }
};

watcher_registry::watcher_registry() = default;
watcher_registry::~watcher_registry() = default;

json::object watcher_registry::call(sandbox const& sb, std::string_view method, json::object const& request,
                                    bool& failed)
{
    constexpr std::size_t max_watchers = 128;  // each holds an inotify instance (a per-user kernel limit)
    failed = false;
    auto fail = [&](char const* code, std::string message) {
        failed = true;
        json::object e;
        e["code"] = code;
        e["message"] = std::move(message);
        return e;
    };
    if (method == "CreateWatcher") {
        auto w = std::make_shared<polling_watcher>();
        if (auto err = open_watch(sb, request, w->ws)) {
            failed = true;
            return (*err)["error"].as_object();
        }
        std::lock_guard lk(mutex_);
        if (watchers_.size() >= max_watchers)
            return fail("resource_exhausted", "too many watchers (" + std::to_string(max_watchers) + ")");
        std::string id = random_id(16);
        watchers_[id] = std::move(w);
        json::object o;
        o["watcherId"] = std::move(id);
        return o;
    }
    std::string id;
    if (auto it = request.find("watcherId"); it != request.end() && it->value().is_string())
        id = std::string(it->value().as_string());
    std::shared_ptr<polling_watcher> w;
    {
        std::lock_guard lk(mutex_);
        if (auto it = watchers_.find(id); it != watchers_.end()) {
            w = it->second;
            if (method == "RemoveWatcher") watchers_.erase(it);
        }
    }
    if (!w) return fail("not_found", "watcher '" + id + "' does not exist");
    if (method == "RemoveWatcher") return {};
    std::lock_guard lk(w->mutex);
    json::array events;
    if (!w->gone) w->gone = drain(sb, w->ws, [&](json::object fe) { events.push_back(std::move(fe)); });
    if (events.empty() && w->gone) return fail("not_found", "the watched directory was removed");
    json::object o;
    o["events"] = std::move(events);
    return o;
}

}  // namespace prism_e2b::local::detail
