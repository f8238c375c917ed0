// envd plain-HTTP /files (download; multipart and octet-stream upload) and the
// filesystem.Filesystem unary RPCs (Stat, MakeDir, Move, ListDir, Remove). Every
// path is normalised (relative to /home/user, no `..` above "/") and opened
// through the sandbox root with RESOLVE_IN_ROOT, so symlinks cannot leave it.
// Nothing here can block on a FIFO, socket or device: /files reads and writes
// regular files only (open_regular_in_root), and directories open O_DIRECTORY.
#include "emulator/file_metadata.hpp"
#include "emulator/gzip_body.hpp"
#include "emulator/link_target.hpp"
#include "emulator/multipart.hpp"
#include "emulator/sandbox_fs.hpp"
#include "emulator/server_state.hpp"
#include "emulator/small_files.hpp"

#include <boost/json.hpp>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr std::size_t whole_file_limit = 8u << 20;  // larger downloads are streamed in chunks

/// Owner for what we create: the requesting user when we may chown (root), else ourselves (0 = leave).
uid_t owner_uid(sandbox const& sb, os_user const& u) { return ::geteuid() == 0 ? sb.host_id(u.uid) : 0; }
gid_t owner_gid(sandbox const& sb, os_user const& u) { return ::geteuid() == 0 ? sb.host_id(u.gid) : 0; }

std::string user_name(uid_t uid)
{
    passwd pw{};
    passwd* res = nullptr;
    char buf[1024];
    uid = sandbox_view_id(uid);
    if (uid == default_uid) return "user";  // the sandbox's own account, whatever the host calls uid 1000
    if (::getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res) return res->pw_name;
    return std::to_string(uid);
}

std::string group_name(gid_t gid)
{
    group gr{};
    group* res = nullptr;
    char buf[1024];
    gid = sandbox_view_id(gid);
    if (gid == default_gid) return "user";
    if (::getgrgid_r(gid, &gr, buf, sizeof buf, &res) == 0 && res) return res->gr_name;
    return std::to_string(gid);
}

std::string timestamp_json(struct timespec ts)
{
    std::time_t secs = ts.tv_sec;
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec);
    return buf;
}

std::string base_name(std::string const& normalized)
{
    if (normalized == "/") return "/";
    return normalized.substr(normalized.rfind('/') + 1);
}

/// The metadata of the entry `name` of `dir_fd` (symlinks have none: user xattrs are not allowed on them).
file_metadata metadata_at(int dir_fd, char const* name, struct stat const& st)
{
    if (S_ISLNK(st.st_mode)) return {};
    unique_fd fd(::openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
    return fd ? read_file_metadata(fd.get()) : file_metadata{};
}

json::object metadata_json(file_metadata const& md)
{
    json::object o;
    for (auto const& [k, v] : md) o[k] = v;
    return o;
}

/// EntryInfo (filesystem.proto) for an lstat result.
json::object entry_json(std::string const& path, struct stat const& st, std::optional<std::string> const& link_target,
                        file_metadata const& md)
{
    json::object o;
    o["name"] = base_name(path);
    o["type"] = S_ISDIR(st.st_mode)   ? "FILE_TYPE_DIRECTORY"
                : S_ISLNK(st.st_mode) ? "FILE_TYPE_SYMLINK"
                                      : "FILE_TYPE_FILE";
    o["path"] = path;
    o["size"] = std::to_string(st.st_size);
    o["mode"] = static_cast<std::uint32_t>(st.st_mode & 07777);
    o["permissions"] = go_mode_string(st.st_mode);
    o["owner"] = user_name(st.st_uid);
    o["group"] = group_name(st.st_gid);
    o["modifiedTime"] = timestamp_json(st.st_mtim);
    if (link_target) o["symlinkTarget"] = *link_target;
    if (!md.empty()) o["metadata"] = metadata_json(md);
    return o;
}

struct fs_error {
    std::string code;  ///< Connect code
    int http;          ///< status for /files
    std::string message;
};

fs_error errno_error(int e, std::string const& path)
{
    switch (e) {
        case ENOENT:
            return {"not_found", 404, "path '" + path + "' does not exist"};
        case ENOTDIR:
            return {"invalid_argument", 400, "path '" + path + "' is not a directory"};
        case EISDIR:
            return {"invalid_argument", 400, "path '" + path + "' is a directory"};
        case EEXIST:
            return {"already_exists", 409, "path '" + path + "' already exists"};
        case EXDEV:
        case ELOOP:
            return {"invalid_argument", 400, "path '" + path + "' cannot be resolved inside the sandbox"};
        // The client's mistakes, not the server's (found by fuzz_http_request: a directory moved into itself).
        case EINVAL:
            return {"invalid_argument", 400, "invalid operation on '" + path + "' (e.g. a directory into itself)"};
        case ENAMETOOLONG:
            return {"invalid_argument", 400, "path '" + path + "' is too long"};
        case ENOTEMPTY:
            return {"failed_precondition", 409, "directory '" + path + "' is not empty"};
        case EACCES:
        case EPERM:
            return {"permission_denied", 403, "permission denied for '" + path + "'"};
        case ENOSPC:
            return {"resource_exhausted", 507, "not enough disk space available"};
        default:
            return {"internal", 500, "error accessing '" + path + "': " + std::strerror(e)};
    }
}

char const* file_kind(mode_t m)
{
    if (S_ISFIFO(m)) return "a named pipe (FIFO)";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    return "not a regular file";
}

/// open_regular_in_root's refusal as an envd error (a FIFO, socket or device is never read or written).
fs_error open_error(regular_file const& f, std::string const& path)
{
    if (f.error != not_regular_file) return errno_error(f.error, path);
    return {"invalid_argument", 400,
            "path '" + path + "' is " + file_kind(f.st.st_mode) + ": only regular files can be read or written"};
}

/// lstat of the last component (the parent resolved inside the root).
std::variant<json::object, fs_error> stat_entry(sandbox const& sb, std::string const& path)
{
    unique_fd fd = open_in_root(sb.root_fd, path, O_PATH | O_NOFOLLOW);
    if (!fd) return errno_error(errno, path);
    struct stat st {};
    if (::fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno_error(errno, path);
    std::optional<std::string> target;
    if (S_ISLNK(st.st_mode)) {
        char buf[4096];
        ssize_t const n = ::readlinkat(fd.get(), "", buf, sizeof buf);
        if (n >= 0) target = resolved_link_target(sb.root_fd, path, std::string(buf, static_cast<std::size_t>(n)));
    }
    return entry_json(path, st, target, S_ISLNK(st.st_mode) ? file_metadata{} : read_file_metadata(fd.get()));
}

void list_into(sandbox const& sb, std::string const& dir_path, int dir_fd, std::uint32_t depth, json::array& out)
{
    int const fd = ::dup(dir_fd);
    if (fd < 0) return;
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        return;
    }
    std::vector<std::string> names;
    while (auto* ent = ::readdir(d)) {
        std::string n = ent->d_name;
        if (n != "." && n != "..") names.push_back(std::move(n));
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (auto const& n : names) {
        std::string child = dir_path == "/" ? "/" + n : dir_path + "/" + n;
        struct stat st {};
        if (::fstatat(dir_fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        std::optional<std::string> target;
        if (S_ISLNK(st.st_mode)) {
            char buf[4096];
            ssize_t const len = ::readlinkat(dir_fd, n.c_str(), buf, sizeof buf);
            if (len >= 0)
                target = resolved_link_target(sb.root_fd, child, std::string(buf, static_cast<std::size_t>(len)));
        }
        out.push_back(entry_json(child, st, target, metadata_at(dir_fd, n.c_str(), st)));
        if (S_ISDIR(st.st_mode) && depth > 1) {
            int sub = ::openat(dir_fd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (sub >= 0) {
                list_into(sb, child, sub, depth - 1, out);
                ::close(sub);
            }
        }
    }
}

http_response rpc_fail(fs_error const& e) { return connect_error(e.code, e.message); }

http_response files_fail(fs_error const& e) { return rest_error(e.http, e.message); }

std::optional<std::string> query_param(std::string const& query, std::string_view key)
{
    for (auto& [k, v] : parse_query(query))
        if (k == key) return v;
    return std::nullopt;
}

/// Writes `data` to `path` (parents created). Returns the EntryInfo for the upload answer.
/// With `md`, that becomes the file's metadata (file_metadata.hpp).
std::variant<json::object, fs_error> write_file(sandbox const& sb, std::string const& path, std::string_view data,
                                                os_user const& user, std::optional<file_metadata> const& md)
{
    std::string parent, name;
    if (!split_parent(path, parent, name)) return fs_error{"invalid_argument", 400, "path '/' is a directory"};
    if (int e = make_dirs_in_root(sb.root_fd, parent, owner_uid(sb, user), owner_gid(sb, user)); e != 0)
        return errno_error(e, parent);
    auto file = open_regular_in_root(sb.root_fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!file.fd) return open_error(file, path);
    auto const& fd = file.fd;
    if (::geteuid() == 0 && file.st.st_nlink == 1)
        (void)::fchown(fd.get(), sb.host_id(user.uid),
                       sb.host_id(user.gid));  // written as the requesting user would have
    if (int const e = write_all(fd.get(), data); e != 0) return errno_error(e, path);
    if (md)
        if (int e = write_file_metadata(fd.get(), *md); e != 0) {
            if (e == ENOTSUP) return fs_error{"failed_precondition", 400, "the file system keeps no file metadata"};
            if (e == ENOSPC || e == E2BIG)
                return fs_error{"invalid_argument", 400, "too much metadata for '" + path + "'"};
            return errno_error(e, path);
        }
    json::object o;
    o["path"] = path;
    o["name"] = name;
    o["type"] = "file";
    if (auto kept = read_file_metadata(fd.get()); !kept.empty()) o["metadata"] = metadata_json(kept);
    return o;
}

asio::awaitable<void> download(std::shared_ptr<sandbox> sb, http_request const& req, response_sink& sink)
{
    auto raw = query_param(req.query, "path");
    auto path = normalize_sandbox_path(raw.value_or(""));
    if (!raw || raw->empty() || !path) {
        std::string msg = "path is required";
        if (raw && !raw->empty()) msg = "invalid path '" + *raw + "': outside the sandbox";
        http_response r = rest_error(400, msg);
        co_await sink.send(std::move(r));
        co_return;
    }
    auto file = open_regular_in_root(sb->root_fd, *path, O_RDONLY);
    if (!file.fd) {
        http_response r = files_fail(open_error(file, *path));
        co_await sink.send(std::move(r));
        co_return;
    }
    auto const& fd = file.fd;
    auto const& st = file.st;
    header_list headers = {{"Content-Disposition", "attachment; filename=\"" + base_name(*path) + "\""}};
    if (static_cast<std::size_t>(st.st_size) <= whole_file_limit) {
        http_response r;
        r.content_type = "application/octet-stream";
        r.headers = std::move(headers);
        char buf[64 * 1024];
        for (;;) {
            ssize_t const n = ::read(fd.get(), buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            r.body.append(buf, static_cast<std::size_t>(n));
        }
        gzip_response_for(req, r);  // larger, streamed downloads stay identity-encoded
        co_await sink.send(std::move(r));
        co_return;
    }
    bool const started = co_await sink.begin_stream(200, "application/octet-stream", std::move(headers));
    if (!started) co_return;
    std::string chunk(256 * 1024, '\0');
    for (;;) {
        ssize_t const n = ::read(fd.get(), chunk.data(), chunk.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        bool const written = co_await sink.write_chunk(chunk.substr(0, static_cast<std::size_t>(n)));
        if (!written) co_return;
    }
    co_await sink.finish_stream();
}

asio::awaitable<void> upload(std::shared_ptr<sandbox> sb, http_request const& req, response_sink& sink, os_user user)
{
    auto raw = query_param(req.query, "path");
    std::optional<std::string> path;
    if (raw && !raw->empty()) {
        path = normalize_sandbox_path(*raw);
        if (!path) {
            co_await sink.send(rest_error(400, "invalid path '" + *raw + "': outside the sandbox"));
            co_return;
        }
    }
    auto const ctype = req.header("content-type");
    std::optional<file_metadata> md;
    if (auto parsed = metadata_from_headers(req.headers); auto* why = std::get_if<std::string>(&parsed)) {
        co_await sink.send(rest_error(400, *why));
        co_return;
    } else if (auto& given = std::get<file_metadata>(parsed); !given.empty()) {
        md = std::move(given);
    }
    json::array written;
    if (auto boundary = multipart_boundary(ctype)) {
        auto parts = parse_multipart(req.body, *boundary);
        if (!parts) {
            co_await sink.send(rest_error(400, "malformed multipart body"));
            co_return;
        }
        for (auto const& p : *parts) {
            if (p.name != "file") continue;
            std::optional<std::string> target = path;
            if (!target) {
                if (!p.filename || p.filename->empty()) {
                    co_await sink.send(rest_error(400, "path is required"));
                    co_return;
                }
                target = normalize_sandbox_path(*p.filename);
                if (!target) {
                    co_await sink.send(rest_error(400, "invalid path '" + *p.filename + "': outside the sandbox"));
                    co_return;
                }
            }
            auto r = write_file(*sb, *target, p.content, user, md);
            if (auto* e = std::get_if<fs_error>(&r)) {
                http_response er = files_fail(*e);
                co_await sink.send(std::move(er));
                co_return;
            }
            written.push_back(std::get<json::object>(std::move(r)));
        }
        if (written.empty()) {
            co_await sink.send(rest_error(400, "no file part in the multipart body"));
            co_return;
        }
    } else if (ctype.empty() || ctype.rfind("application/octet-stream", 0) == 0) {
        if (!path) {
            co_await sink.send(rest_error(400, "path is required for application/octet-stream uploads"));
            co_return;
        }
        auto r = write_file(*sb, *path, req.body, user, md);
        if (auto* e = std::get_if<fs_error>(&r)) {
            http_response er = files_fail(*e);
            co_await sink.send(std::move(er));
            co_return;
        }
        written.push_back(std::get<json::object>(std::move(r)));
    } else {
        co_await sink.send(
            rest_error(400, "unsupported Content-Type; use multipart/form-data or application/octet-stream"));
        co_return;
    }
    http_response r;
    r.body = json::serialize(written);
    co_await sink.send(std::move(r));
}

}  // namespace

std::optional<json::object> entry_info(sandbox const& sb, std::string const& path)
{
    auto r = stat_entry(sb, path);
    if (auto* e = std::get_if<json::object>(&r)) return std::move(*e);
    return std::nullopt;
}

asio::awaitable<void> handle_files(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb, http_request req,
                                   response_sink& sink)
{
    if (req.method == "POST")
        if (auto refused = inflate_upload(req, st->opts.max_file_bytes)) {
            co_await sink.send(std::move(*refused));
            co_return;
        }
    auto name = query_param(req.query, "username");
    if (!name) {
        if (auto h = basic_auth_user(req.header("authorization"))) name = *h;
    }
    auto const user = sandbox_user(*sb, name.value_or(""));
    if (!user) {
        co_await sink.send(rest_error(401, "error looking up user '" + name.value_or("") + "': unknown user"));
        co_return;
    }
    if (req.method == "GET")
        co_await download(sb, req, sink);
    else if (req.method == "POST")
        co_await upload(sb, req, sink, *user);
    else
        co_await sink.send(rest_error(405, "method not allowed"));
}

asio::awaitable<void> handle_filesystem_rpc(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                            http_request req, response_sink& sink)
{
    std::string_view const method =
        std::string_view(req.path).substr(std::string_view("/filesystem.Filesystem/").size());
    if (req.method != "POST") {
        co_await sink.send(connect_error("unimplemented", "only POST is supported"));
        co_return;
    }
    if (method == "WatchDir" && req.header("content-type").rfind("application/connect+json", 0) == 0) {
        co_await handle_watch_dir(st, std::move(sb), std::move(req), sink);
        co_return;
    }
    json::value v;
    if (auto refused = parse_unary_json(req, v)) {
        co_await sink.send(std::move(*refused));
        co_return;
    }
    auto const& o = v.as_object();
    auto const who = basic_auth_user(req.header("authorization"));
    auto const user = who ? sandbox_user(*sb, *who) : std::nullopt;
    if (!user) {
        co_await sink.send(
            connect_error("unauthenticated", "invalid user: only 'user' and 'root' exist in this sandbox"));
        co_return;
    }
    auto path_field = [&](std::string_view key) -> std::variant<std::string, fs_error> {
        std::string raw;
        if (auto it = o.find(key); it != o.end() && it->value().is_string()) raw = std::string(it->value().as_string());
        auto p = normalize_sandbox_path(raw);
        if (!p) return fs_error{"invalid_argument", 400, "invalid path '" + raw + "': outside the sandbox"};
        return *p;
    };
    auto reply = [&](json::object const& body) {
        http_response r;
        r.body = json::serialize(body);
        return r;
    };
    http_response resp;
    if (method == "Stat" || method == "MakeDir" || method == "ListDir" || method == "Remove") {
        auto p = path_field("path");
        if (auto* e = std::get_if<fs_error>(&p)) {
            resp = rpc_fail(*e);
        } else {
            auto const& path = std::get<std::string>(p);
            if (method == "Stat") {
                auto r = stat_entry(*sb, path);
                if (auto* e = std::get_if<fs_error>(&r))
                    resp = rpc_fail(*e);
                else {
                    json::object out;
                    out["entry"] = std::get<json::object>(std::move(r));
                    resp = reply(out);
                }
            } else if (method == "MakeDir") {
                unique_fd existing = open_in_root(sb->root_fd, path, O_PATH);
                if (existing) {
                    struct stat st {};
                    ::fstat(existing.get(), &st);
                    resp =
                        S_ISDIR(st.st_mode)
                            ? rpc_fail({"already_exists", 409, "directory '" + path + "' already exists"})
                            : rpc_fail({"invalid_argument", 400, "path '" + path + "' exists and is not a directory"});
                } else if (int e = make_dirs_in_root(sb->root_fd, path, owner_uid(*sb, *user), owner_gid(*sb, *user));
                           e != 0) {
                    resp = rpc_fail(errno_error(e, path));
                } else {
                    auto r = stat_entry(*sb, path);
                    json::object out;
                    if (auto* ent = std::get_if<json::object>(&r)) out["entry"] = *ent;
                    resp = reply(out);
                }
            } else if (method == "ListDir") {
                std::uint32_t depth = 1;
                if (auto it = o.find("depth"); it != o.end()) {
                    if (it->value().is_int64() && it->value().as_int64() > 0)
                        depth = static_cast<std::uint32_t>(std::min<std::int64_t>(it->value().as_int64(), 64));
                    else if (it->value().is_uint64() && it->value().as_uint64() > 0)
                        depth = static_cast<std::uint32_t>(std::min<std::uint64_t>(it->value().as_uint64(), 64));
                }
                unique_fd dir = open_in_root(sb->root_fd, path, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
                if (!dir) {
                    resp = rpc_fail(errno_error(errno, path));
                } else {
                    json::array entries;
                    list_into(*sb, path, dir.get(), depth, entries);
                    json::object out;
                    out["entries"] = std::move(entries);
                    resp = reply(out);
                }
            } else {  // Remove
                std::string parent, name;
                if (!split_parent(path, parent, name)) {
                    resp = rpc_fail({"invalid_argument", 400, "cannot remove '/'"});
                } else {
                    unique_fd pdir = open_in_root(sb->root_fd, parent, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
                    int e = pdir ? remove_tree_at(pdir.get(), name) : errno;
                    // As envd's os.RemoveAll (and E2B's tests): a path that is not there is removed.
                    resp = e == 0 || e == ENOENT ? reply({}) : rpc_fail(errno_error(e, path));
                }
            }
        }
    } else if (method == "Move") {
        auto src = path_field("source");
        auto dst = path_field("destination");
        if (auto* e = std::get_if<fs_error>(&src)) {
            resp = rpc_fail(*e);
        } else if (auto* e2 = std::get_if<fs_error>(&dst)) {
            resp = rpc_fail(*e2);
        } else {
            auto const& s = std::get<std::string>(src);
            auto const& d = std::get<std::string>(dst);
            std::string sp, sn, dp, dn;
            if (!split_parent(s, sp, sn) || !split_parent(d, dp, dn)) {
                resp = rpc_fail({"invalid_argument", 400, "cannot move '/'"});
            } else {
                unique_fd sdir = open_in_root(sb->root_fd, sp, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
                int e = sdir ? 0 : errno;
                if (e == 0) e = make_dirs_in_root(sb->root_fd, dp, owner_uid(*sb, *user), owner_gid(*sb, *user));
                unique_fd ddir;
                if (e == 0) {
                    ddir = open_in_root(sb->root_fd, dp, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
                    if (!ddir) e = errno;
                }
                if (e == 0 && ::renameat(sdir.get(), sn.c_str(), ddir.get(), dn.c_str()) != 0) e = errno;
                if (e != 0) {
                    resp = rpc_fail(errno_error(e, e == ENOENT ? s : d));
                } else {
                    auto r = stat_entry(*sb, d);
                    json::object out;
                    if (auto* ent = std::get_if<json::object>(&r)) out["entry"] = *ent;
                    resp = reply(out);
                }
            }
        }
    } else if (method == "CreateWatcher" || method == "GetWatcherEvents" || method == "RemoveWatcher") {
        bool failed = false;
        auto answer = sb->watchers.call(*sb, method, o, failed);
        resp = failed
                   ? connect_error(std::string(answer["code"].as_string()), std::string(answer["message"].as_string()))
                   : reply(answer);
    } else {
        resp = connect_error("unimplemented",
                             "filesystem.Filesystem/" + std::string(method) + " is not implemented by prism-e2b-local");
    }
    co_await sink.send(std::move(resp));
}

}  // namespace prism_e2b::local::detail
