// The volume API (openapi.yml): GET/POST /volumes, GET/DELETE /volumes/{id} under the API
// key; and the volume-content API the SDK's Volume speaks, under the volume's own Bearer
// token: /volumecontent/{id}/dir (GET list, POST make), /path (GET stat, PATCH owner and
// mode, DELETE), /file (GET read, PUT write). Paths are the volume's ("/" is its root),
// resolved with openat2(RESOLVE_IN_ROOT) under its data directory: neither ".." nor a
// symlink a sandbox left there leads outside it. Owners are the ids inside a sandbox.
#include "emulator/server_state.hpp"
#include "emulator/small_files.hpp"
#include "emulator/volumes.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr std::string_view content_prefix = "/volumecontent/";
/// Ids a volume's files may have: those a sandbox's range maps (0..65535 inside).
constexpr std::int64_t max_volume_id = 65535;
/// Entries one listing answers at most (a sandbox may fill a volume with millions).
constexpr std::size_t max_listed = 100000;
constexpr int max_list_depth = 64;

json::object volume_json(volume_record const& v, bool with_token)
{
    json::object o;
    o["volumeID"] = v.id;
    o["name"] = v.name;
    if (with_token) o["token"] = v.token;
    return o;
}

http_response volume_not_found(std::string_view id)
{
    return rest_error(404, "volume \"" + std::string(id) + "\" doesn't exist or you don't have access to it");
}

/// The sandboxes (not killed) that mount volume `id`.
std::vector<std::string> sandboxes_mounting(server_state const& st, std::string_view id)
{
    std::vector<std::string> out;
    std::lock_guard lk(st.mutex);
    for (auto const& [sid, sb] : st.sandboxes)
        for (auto const& m : sb->volume_mounts)
            if (m.volume_id == id) {
                out.push_back(sid);
                break;
            }
    return out;
}

http_response create_volume(server_state& st, std::string const& body)
{
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec || !v.is_object()) return rest_error(400, "request body must be a JSON object");
    auto const* n = v.as_object().if_contains("name");
    if (!n || !n->is_string()) return rest_error(400, "name is required");
    auto made = st.volumes.create(std::string(n->as_string()));
    if (!made) {
        int const status = made.error() == errc::invalid_argument ? 400 : made.error() == errc::conflict ? 409 : 500;
        return rest_error(status, made.error().message());
    }
    st.log(log_level::info, "prism-e2b-local: created volume " + made->id + " (" + made->name + ")");
    return json_response(201, volume_json(*made, true));
}

http_response delete_volume(server_state& st, std::string const& id)
{
    if (!st.volumes.find(id)) return volume_not_found(id);
    if (auto users = sandboxes_mounting(st, id); !users.empty()) {
        std::string list;
        for (auto const& u : users) list += (list.empty() ? "" : ", ") + u;
        return rest_error(409, "volume \"" + id + "\" is mounted by sandbox(es) " + list + ": kill them first");
    }
    if (!st.volumes.remove(id)) return volume_not_found(id);
    st.log(log_level::info, "prism-e2b-local: deleted volume " + id);
    return no_content();
}

// ------------------------------------------------------------- content API

/// "/volumecontent/<id>/<what>" -> (id, what).
std::optional<std::pair<std::string, std::string>> content_route(std::string_view path)
{
    if (path.rfind(content_prefix, 0) != 0) return std::nullopt;
    path.remove_prefix(content_prefix.size());
    auto const slash = path.find('/');
    if (slash == 0 || slash == std::string_view::npos) return std::nullopt;
    auto const what = path.substr(slash + 1);
    if (what != "dir" && what != "path" && what != "file") return std::nullopt;
    return std::pair{std::string(path.substr(0, slash)), std::string(what)};
}

struct content_query {
    std::string path;
    std::optional<std::int64_t> uid, gid, mode, depth;
    bool force = false;
};

std::optional<std::string> parse_number(std::string const& v, char const* name, std::int64_t max,
                                        std::optional<std::int64_t>& out)
{
    char* endp = nullptr;
    errno = 0;
    long long const n = std::strtoll(v.c_str(), &endp, 10);
    if (v.empty() || *endp != '\0' || errno != 0 || n < 0 || n > max)
        return std::string(name) + " must be a number from 0 to " + std::to_string(max);
    out = n;
    return std::nullopt;
}

std::optional<std::string> parse_content_query(std::string const& query, content_query& q)
{
    bool has_path = false;
    for (auto const& [k, v] : parse_query(query)) {
        std::optional<std::string> e;
        if (k == "path") {
            has_path = true;
            q.path = v;
        } else if (k == "uid") {
            e = parse_number(v, "uid", max_volume_id, q.uid);
        } else if (k == "gid") {
            e = parse_number(v, "gid", max_volume_id, q.gid);
        } else if (k == "mode") {
            e = parse_number(v, "mode", 07777, q.mode);
        } else if (k == "depth") {
            e = parse_number(v, "depth", max_list_depth, q.depth);
        } else if (k == "force") {
            if (v != "true" && v != "false") e = "force must be true or false";
            q.force = v == "true";
        }
        if (e) return e;
    }
    if (!has_path) return std::string("path is required");
    if (q.path.empty() || q.path.front() != '/')
        return std::string("path must be absolute (\"/\" is the volume's root)");
    auto norm = normalize_sandbox_path(q.path);
    if (!norm) return std::string("path must not climb above the volume's root");
    q.path = *norm;
    return std::nullopt;
}

std::string timespec_rfc3339(timespec const& ts)
{
    auto const tp =
        std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
    return rfc3339(tp);
}

json::object stat_json(std::string const& path, struct stat const& s, std::optional<std::string> target)
{
    json::object o;
    auto const slash = path.rfind('/');
    o["name"] = path == "/" ? std::string() : path.substr(slash + 1);
    o["path"] = path;
    o["type"] = S_ISREG(s.st_mode)   ? "file"
                : S_ISDIR(s.st_mode) ? "directory"
                : S_ISLNK(s.st_mode) ? "symlink"
                                     : "unknown";
    o["size"] = static_cast<std::int64_t>(s.st_size);
    o["mode"] = static_cast<std::uint32_t>(s.st_mode & 07777);
    o["uid"] = static_cast<std::uint32_t>(s.st_uid);
    o["gid"] = static_cast<std::uint32_t>(s.st_gid);
    o["atime"] = timespec_rfc3339(s.st_atim);
    o["mtime"] = timespec_rfc3339(s.st_mtim);
    o["ctime"] = timespec_rfc3339(s.st_ctim);
    if (target) o["target"] = *target;
    return o;
}

std::optional<std::string> link_target_at(int dir_fd, char const* name)
{
    std::string buf(4096, '\0');
    ssize_t const n = ::readlinkat(dir_fd, name, buf.data(), buf.size());
    if (n < 0) return std::nullopt;
    buf.resize(static_cast<std::size_t>(n));
    return buf;
}

/// The entry at `path` itself (a symlink is reported, not followed). nullopt with errno set.
std::optional<json::object> stat_entry(int root, std::string const& path)
{
    unique_fd fd = open_in_root(root, path, O_PATH | O_NOFOLLOW);
    if (!fd) return std::nullopt;
    struct stat s {};
    if (::fstat(fd.get(), &s) != 0) return std::nullopt;
    std::optional<std::string> target;
    if (S_ISLNK(s.st_mode)) target = link_target_at(fd.get(), "");
    return stat_json(path, s, std::move(target));
}

http_response errno_response(int err, std::string const& path)
{
    switch (err) {
        case ENOENT:
            return rest_error(404, "path " + path + " not found");
        case ENOTDIR:
            return rest_error(400, "a component of " + path + " is not a directory");
        case EISDIR:
            return rest_error(400, path + " is a directory");
        case EEXIST:
            return rest_error(409, path + " exists");
        case ELOOP:
            return rest_error(400, path + " is a symlink");
        case ENOSPC:
        case EDQUOT:
            return rest_error(507, "no space left for " + path);
        default:
            return rest_error(500, path + ": " + std::strerror(err));
    }
}

/// The owner and mode a request asks for, applied to `fd` (O_PATH is fine).
int apply_metadata(int fd, std::optional<std::int64_t> uid, std::optional<std::int64_t> gid,
                   std::optional<std::int64_t> mode)
{
    if ((uid || gid) &&
        ::fchownat(fd, "", uid ? static_cast<uid_t>(*uid) : static_cast<uid_t>(-1),
                   gid ? static_cast<gid_t>(*gid) : static_cast<gid_t>(-1), AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
        return errno;
    if (mode) {
        struct stat s {};
        if (::fstat(fd, &s) != 0) return errno;
        if (S_ISLNK(s.st_mode)) return ELOOP;  // a symlink has no mode of its own
        // fchmod needs a descriptor opened for I/O; the O_PATH one is reached through /proc.
        std::string const self = "/proc/self/fd/" + std::to_string(fd);
        if (::chmod(self.c_str(), static_cast<mode_t>(*mode)) != 0) return errno;
    }
    return 0;
}

void list_into(int root, std::string const& dir, int depth, json::array& out)
{
    unique_fd fd = open_in_root(root, dir, O_RDONLY | O_DIRECTORY);
    if (!fd) return;
    DIR* d = ::fdopendir(fd.release());
    if (!d) return;
    std::vector<std::string> subdirs;
    while (dirent* e = ::readdir(d)) {
        if (out.size() >= max_listed) break;
        std::string_view const name = e->d_name;
        if (name == "." || name == "..") continue;
        struct stat s {};
        if (::fstatat(::dirfd(d), e->d_name, &s, AT_SYMLINK_NOFOLLOW) != 0) continue;
        std::string const child = (dir == "/" ? std::string() : dir) + "/" + std::string(name);
        std::optional<std::string> target;
        if (S_ISLNK(s.st_mode)) target = link_target_at(::dirfd(d), e->d_name);
        out.push_back(stat_json(child, s, std::move(target)));
        if (S_ISDIR(s.st_mode) && depth > 1) subdirs.push_back(child);
    }
    ::closedir(d);
    for (auto const& sub : subdirs) list_into(root, sub, depth - 1, out);
}

http_response list_dir(int root, content_query const& q)
{
    unique_fd fd = open_in_root(root, q.path, O_PATH | O_DIRECTORY);
    if (!fd) return errno_response(errno, q.path);
    json::array out;
    list_into(root, q.path, static_cast<int>(q.depth.value_or(1)), out);
    return json_response(200, out);
}

http_response make_dir(int root, content_query const& q)
{
    bool const is_root = ::geteuid() == 0;
    std::optional<std::int64_t> uid = q.uid, gid = q.gid;
    if (!uid && is_root) uid = volume_default_id;
    if (!gid && is_root) gid = volume_default_id;
    if (q.path == "/") return rest_error(409, "/ exists");
    if (q.force) {
        // mkdir -p: missing parents belong to the same owner; an existing directory is fine.
        if (int const err =
                make_dirs_in_root(root, q.path, uid ? static_cast<uid_t>(*uid) : 0, gid ? static_cast<gid_t>(*gid) : 0))
            return errno_response(err, q.path);
    } else {
        std::string parent, name;
        split_parent(q.path, parent, name);
        unique_fd p = open_in_root(root, parent, O_PATH | O_DIRECTORY);
        if (!p) return errno_response(errno, parent);
        if (::mkdirat(p.get(), name.c_str(), 0755) != 0) return errno_response(errno, q.path);
    }
    unique_fd fd = open_in_root(root, q.path, O_PATH | O_DIRECTORY | O_NOFOLLOW);
    if (!fd) return errno_response(errno, q.path);
    if (int const err = apply_metadata(fd.get(), uid, gid, q.mode.value_or(0755))) return errno_response(err, q.path);
    auto st = stat_entry(root, q.path);
    return st ? json_response(201, *st) : errno_response(errno, q.path);
}

http_response patch_path(int root, content_query const& q, std::string const& body)
{
    boost::system::error_code ec;
    auto v = json::parse(body.empty() ? std::string("{}") : body, ec);
    if (ec || !v.is_object()) return rest_error(400, "request body must be a JSON object");
    content_query m = q;
    for (auto const& [k, x] : v.as_object()) {
        if (x.is_null()) continue;
        std::int64_t const max = k == "mode" ? 07777 : max_volume_id;
        if ((k == "uid" || k == "gid" || k == "mode") &&
            (!x.is_number() || !x.is_int64() || x.as_int64() < 0 || x.as_int64() > max))
            return rest_error(400, std::string(k) + " must be a number from 0 to " + std::to_string(max));
        if (k == "uid") m.uid = x.as_int64();
        if (k == "gid") m.gid = x.as_int64();
        if (k == "mode") m.mode = x.as_int64();
    }
    unique_fd fd = open_in_root(root, q.path, O_PATH | O_NOFOLLOW);
    if (!fd) return errno_response(errno, q.path);
    if (int const err = apply_metadata(fd.get(), m.uid, m.gid, m.mode)) return errno_response(err, q.path);
    auto st = stat_entry(root, q.path);
    return st ? json_response(200, *st) : errno_response(errno, q.path);
}

http_response remove_path(int root, content_query const& q)
{
    if (q.path == "/") return rest_error(400, "the volume's root cannot be removed (delete the volume)");
    std::string parent, name;
    split_parent(q.path, parent, name);
    unique_fd p = open_in_root(root, parent, O_RDONLY | O_DIRECTORY);
    if (!p) return errno_response(errno, q.path);
    struct stat s {};
    if (::fstatat(p.get(), name.c_str(), &s, AT_SYMLINK_NOFOLLOW) != 0) return errno_response(errno, q.path);
    if (int const err = remove_tree_at(p.get(), name)) return errno_response(err, q.path);
    return no_content();
}

http_response write_file(int root, content_query const& q, std::string const& body)
{
    bool const existed = static_cast<bool>(open_in_root(root, q.path, O_PATH));
    auto f = open_regular_in_root(root, q.path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!f.fd) {
        if (f.error == not_regular_file) return rest_error(400, q.path + " is not a regular file");
        return errno_response(f.error, q.path);
    }
    if (int const e = write_all(f.fd.get(), body); e != 0) return errno_response(e, q.path);
    std::optional<std::int64_t> uid = q.uid, gid = q.gid, mode = q.mode;
    if (!existed && ::geteuid() == 0) {  // a new file is the sandbox user's, 0644, unless asked otherwise
        if (!uid) uid = volume_default_id;
        if (!gid) gid = volume_default_id;
    }
    if (!existed && !mode) mode = 0644;
    if (int const err = apply_metadata(f.fd.get(), uid, gid, mode)) return errno_response(err, q.path);
    auto st = stat_entry(root, q.path);
    return st ? json_response(201, *st) : errno_response(errno, q.path);
}

/// GET .../file: the bytes, streamed in chunks (a sandbox may have written more than fits a body).
asio::awaitable<void> read_file(int root, content_query const& q, response_sink& sink)
{
    auto f = open_regular_in_root(root, q.path, O_RDONLY);
    if (!f.fd) {
        // Named before co_await: g++ 12 mishandles temporaries of a co_await's full-expression.
        http_response refused = f.error == not_regular_file ? rest_error(400, q.path + " is not a regular file")
                                                            : errno_response(f.error, q.path);
        co_await sink.send(std::move(refused));
        co_return;
    }
    header_list none;
    if (!co_await sink.begin_stream(200, "application/octet-stream", std::move(none))) co_return;
    std::string buf(256 * 1024, '\0');
    for (;;) {
        ssize_t const n = ::read(f.fd.get(), buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // an I/O error cuts the stream short: the client sees it unfinished
        std::string chunk(buf.data(), static_cast<std::size_t>(n));
        if (!co_await sink.write_chunk(std::move(chunk))) co_return;
    }
    co_await sink.finish_stream();
}

}  // namespace

std::optional<http_response> volume_content_refusal(server_state const& st, http_request const& req)
{
    auto const route = content_route(req.path);
    auto const auth = req.header("authorization");
    constexpr std::string_view bearer = "Bearer ";
    auto const v = route ? st.volumes.find(route->first) : std::nullopt;
    // The same answer for an unknown volume and a wrong token: a token names its volume.
    if (!v || auth.size() <= bearer.size() || auth.substr(0, bearer.size()) != bearer ||
        !secure_equals(auth.substr(bearer.size()), v->token))
        return rest_error(401, "invalid or missing volume token");
    return std::nullopt;
}

asio::awaitable<void> handle_volume_content(std::shared_ptr<server_state> st, http_request req, response_sink& sink)
{
    auto const route = content_route(req.path);
    if (!route) {
        co_await sink.send(rest_error(404, "no such route"));
        co_return;
    }
    std::string const id = route->first;
    std::string const what = route->second;
    content_query q;
    if (auto e = parse_content_query(req.query, q)) {
        co_await sink.send(rest_error(400, *e));
        co_return;
    }
    if ((q.uid || q.gid) && ::geteuid() != 0) {
        co_await sink.send(rest_error(400, "uid/gid: owners can be set only by a server run as root"));
        co_return;
    }
    unique_fd root(::open(st->volumes.data_dir(id).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) {  // deleted since refusal() looked
        co_await sink.send(volume_not_found(id));
        co_return;
    }
    auto const& m = req.method;
    std::optional<http_response> r;
    if (what == "dir") {
        r = m == "GET"    ? list_dir(root.get(), q)
            : m == "POST" ? make_dir(root.get(), q)
                          : rest_error(405, "method not allowed");
    } else if (what == "path") {
        if (m == "GET") {
            auto s = stat_entry(root.get(), q.path);
            r = s ? json_response(200, *s) : errno_response(errno, q.path);
        } else if (m == "PATCH") {
            r = patch_path(root.get(), q, req.body);
        } else if (m == "DELETE") {
            r = remove_path(root.get(), q);
        } else {
            r = rest_error(405, "method not allowed");
        }
    } else if (m == "PUT") {
        r = write_file(root.get(), q, req.body);
    } else if (m != "GET") {
        r = rest_error(405, "method not allowed");
    }
    if (r) {
        co_await sink.send(std::move(*r));
        co_return;
    }
    co_await read_file(root.get(), q, sink);
}

asio::awaitable<bool> handle_volume_routes(std::shared_ptr<server_state> st, http_request const& req,
                                           response_sink& sink)
{
    std::string_view const path(req.path);
    std::optional<http_response> r;
    if (path == "/volumes") {
        if (req.method == "GET") {
            json::array all;
            for (auto const& v : st->volumes.list()) all.push_back(volume_json(v, false));
            r = json_response(200, all);
        } else if (req.method == "POST") {
            r = create_volume(*st, req.body);
        } else {
            r = rest_error(405, "method not allowed");
        }
    } else if (path.rfind("/volumes/", 0) == 0 && path.size() > 9 && path.find('/', 9) == std::string_view::npos) {
        std::string const id(path.substr(9));
        if (req.method == "GET") {
            auto v = st->volumes.find(id);
            r = v ? json_response(200, volume_json(*v, true)) : volume_not_found(id);
        } else if (req.method == "DELETE") {
            r = delete_volume(*st, id);
        } else {
            r = rest_error(405, "method not allowed");
        }
    }
    if (!r) co_return false;
    co_await sink.send(std::move(*r));
    co_return true;
}

}  // namespace prism_e2b::local::detail
