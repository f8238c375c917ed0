// Volumes of client_impl (e2b/volumes.hpp): the /volumes API under the API key, and
// the volume-content API (/volumecontent/{id}/dir|path|file) under each volume's
// Bearer token, at the API's origin (E2B serves both from api.<domain>). The
// coroutines take the client as a parameter, never a capture: a capture lives in the
// lambda object, which is gone once the coroutine first suspends.
#include <prism_e2b/redactor.hpp>

#include "core/spawn_op.hpp"
#include "wire/client_impl.hpp"
#include "wire/error_map.hpp"
#include "wire/rest_json.hpp"

#include <boost/json.hpp>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::wire {
namespace {

error bad(std::string const& op, int status, std::string const& what)
{
    return error(errc::protocol_error, op + ": " + what, {op, status, {}});
}

std::string string_field(json::object const& o, char const* name, bool& good)
{
    auto const* v = o.if_contains(name);
    if (!v || !v->is_string()) {
        good = false;
        return {};
    }
    return std::string(v->get_string());
}

/// Volume / VolumeAndToken. A token is a secret from the moment it is read.
result<e2b::volume_info> to_volume(json::value const& v, bool with_token, std::string const& op, int status)
{
    auto const* o = v.if_object();
    if (!o) return bad(op, status, "a volume is not a JSON object");
    bool good = true;
    e2b::volume_info out;
    out.volume_id = string_field(*o, "volumeID", good);
    out.name = string_field(*o, "name", good);
    if (with_token) out.token = string_field(*o, "token", good);
    if (!good || out.volume_id.empty() || (with_token && out.token.empty()))
        return bad(op, status, "volumeID, name or token is missing");
    if (with_token) secret_redactor::global().add(out.token, "volume/" + out.volume_id);
    return out;
}

/// VolumeEntryStat.
result<e2b::volume_entry> to_entry(json::value const& v, std::string const& op, int status)
{
    auto const* o = v.if_object();
    if (!o) return bad(op, status, "an entry is not a JSON object");
    bool good = true;
    e2b::volume_entry e;
    e.name = string_field(*o, "name", good);
    e.path = string_field(*o, "path", good);
    auto const type = string_field(*o, "type", good);
    e.atime = string_field(*o, "atime", good);
    e.mtime = string_field(*o, "mtime", good);
    e.ctime = string_field(*o, "ctime", good);
    if (!good) return bad(op, status, "an entry lacks name, path, type or a time");
    e.type = type == "file"        ? e2b::volume_entry_type::file
             : type == "directory" ? e2b::volume_entry_type::directory
             : type == "symlink"   ? e2b::volume_entry_type::symlink
                                   : e2b::volume_entry_type::unknown;
    auto number = [&](char const* name, std::int64_t max) -> std::int64_t {
        auto const* n = o->if_contains(name);
        if (!n || !n->is_int64() || n->get_int64() < 0 || n->get_int64() > max) {
            good = false;
            return 0;
        }
        return n->get_int64();
    };
    constexpr std::int64_t u32 = 0xffffffffLL;
    e.size = number("size", std::numeric_limits<std::int64_t>::max());
    e.mode = static_cast<std::uint32_t>(number("mode", u32));
    e.uid = static_cast<std::uint32_t>(number("uid", u32));
    e.gid = static_cast<std::uint32_t>(number("gid", u32));
    if (!good) return bad(op, status, "an entry's size, mode, uid or gid is missing or out of range");
    if (auto const* t = o->if_contains("target"); t && t->is_string()) e.target = std::string(t->get_string());
    return e;
}

std::string volume_path(std::string const& id) { return "/volumes/" + rest::encode_uri_component(id); }

void add_metadata(std::string& query, e2b::volume_metadata const& m)
{
    if (m.uid) rest::append_query(query, "uid", std::to_string(*m.uid));
    if (m.gid) rest::append_query(query, "gid", std::to_string(*m.gid));
    if (m.mode) rest::append_query(query, "mode", std::to_string(*m.mode));
}

}  // namespace

asio::awaitable<result<http_response>> client_impl::volume_call(std::string method, std::string what,
                                                                e2b::volume_ref const& volume, std::string query,
                                                                std::optional<std::string> body,
                                                                char const* content_type, bool idempotent)
{
    std::string target = "/volumecontent/" + rest::encode_uri_component(volume.volume_id) + "/" + what + query;
    header_list auth{{"Authorization", "Bearer " + volume.token}};
    std::string const op = "volume " + method + " " + what;
    auto r = co_await origin_call(std::move(method), std::move(target), std::move(auth), std::move(body), content_type,
                                  idempotent);
    if (!r) co_return r.error();
    if (!http_success(r->status)) co_return rest_error(op, r->status, r->body);
    co_return r;
}

namespace {

/// One entry from a content call's JSON answer.
result<e2b::volume_entry> entry_of(result<http_response> const& r, std::string const& op)
{
    if (!r) return r.error();
    boost::system::error_code ec;
    auto v = json::parse(r->body, ec);
    if (ec) return bad(op, r->status, "invalid JSON");
    return to_entry(v, op, r->status);
}

std::string path_query(std::string const& path)
{
    std::string q;
    rest::append_query(q, "path", path);
    return q;
}

}  // namespace

void client_impl::do_create_volume(std::string name, completion_handler<e2b::volume_info> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self, std::string name) -> asio::awaitable<result<e2b::volume_info>> {
            std::optional<std::string> body = json::serialize(json::object{{"name", name}});
            auto r = co_await self->api_call("POST", "/volumes", std::move(body), false);
            if (!r) co_return r.error();
            if (!http_success(r->status)) co_return rest_error("create volume " + name, r->status, r->body);
            boost::system::error_code ec;
            auto v = json::parse(r->body, ec);
            if (ec) co_return bad("create volume", r->status, "invalid JSON");
            co_return to_volume(v, true, "create volume", r->status);
        }(this, std::move(name)),
        std::move(h));
}

void client_impl::do_get_volume(std::string volume_id, completion_handler<e2b::volume_info> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self, std::string id) -> asio::awaitable<result<e2b::volume_info>> {
            auto r = co_await self->api_call("GET", volume_path(id), std::nullopt, true);
            if (!r) co_return r.error();
            if (!http_success(r->status)) co_return rest_error("get volume " + id, r->status, r->body);
            boost::system::error_code ec;
            auto v = json::parse(r->body, ec);
            if (ec) co_return bad("get volume", r->status, "invalid JSON");
            co_return to_volume(v, true, "get volume", r->status);
        }(this, std::move(volume_id)),
        std::move(h));
}

void client_impl::do_list_volumes(completion_handler<std::vector<e2b::volume_info>> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self) -> asio::awaitable<result<std::vector<e2b::volume_info>>> {
            auto r = co_await self->api_call("GET", "/volumes", std::nullopt, true);
            if (!r) co_return r.error();
            if (!http_success(r->status)) co_return rest_error("list volumes", r->status, r->body);
            boost::system::error_code ec;
            auto v = json::parse(r->body, ec);
            if (ec || !v.is_array()) co_return bad("list volumes", r->status, "expected a JSON array");
            std::vector<e2b::volume_info> out;
            for (auto const& item : v.get_array()) {
                auto one = to_volume(item, false, "list volumes", r->status);
                if (!one) co_return one.error();
                out.push_back(std::move(*one));
            }
            co_return out;
        }(this),
        std::move(h));
}

void client_impl::do_delete_volume(std::string volume_id, completion_handler<bool> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self, std::string id) -> asio::awaitable<result<bool>> {
            auto r = co_await self->api_call("DELETE", volume_path(id), std::nullopt, false);
            if (!r) co_return r.error();
            if (http_success(r->status)) {
                secret_redactor::global().release("volume/" + id);
                co_return true;
            }
            if (effective_rest_status(r->status, parse_rest_error_body(r->body)) == 404) co_return false;
            co_return rest_error("delete volume " + id, r->status, r->body);
        }(this, std::move(volume_id)),
        std::move(h));
}

void client_impl::do_volume_list(e2b::volume_ref volume, std::string path, std::uint32_t depth,
                                 completion_handler<std::vector<e2b::volume_entry>> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self, e2b::volume_ref vol, std::string path,
           std::uint32_t depth) -> asio::awaitable<result<std::vector<e2b::volume_entry>>> {
            std::string q = path_query(path);
            rest::append_query(q, "depth", std::to_string(depth));
            auto r = co_await self->volume_call("GET", "dir", vol, std::move(q), std::nullopt, "", true);
            if (!r) co_return r.error();
            boost::system::error_code ec;
            auto v = json::parse(r->body, ec);
            if (ec || !v.is_array()) co_return bad("volume list", r->status, "expected a JSON array");
            std::vector<e2b::volume_entry> out;
            for (auto const& item : v.get_array()) {
                auto e = to_entry(item, "volume list", r->status);
                if (!e) co_return e.error();
                out.push_back(std::move(*e));
            }
            co_return out;
        }(this, std::move(volume), std::move(path), depth),
        std::move(h));
}

void client_impl::do_volume_make_dir(e2b::volume_ref volume, std::string path, e2b::volume_write_options options,
                                     completion_handler<e2b::volume_entry> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self, e2b::volume_ref vol, std::string path,
           e2b::volume_write_options o) -> asio::awaitable<result<e2b::volume_entry>> {
            std::string q = path_query(path);
            add_metadata(q, o.metadata);
            if (o.force) rest::append_query(q, "force", "true");
            auto r = co_await self->volume_call("POST", "dir", vol, std::move(q), std::nullopt, "", false);
            co_return entry_of(r, "volume make dir");
        }(this, std::move(volume), std::move(path), std::move(options)),
        std::move(h));
}

void client_impl::do_volume_stat(e2b::volume_ref volume, std::string path, completion_handler<e2b::volume_entry> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self, e2b::volume_ref vol, std::string path) -> asio::awaitable<result<e2b::volume_entry>> {
            auto r = co_await self->volume_call("GET", "path", vol, path_query(path), std::nullopt, "", true);
            co_return entry_of(r, "volume stat");
        }(this, std::move(volume), std::move(path)),
        std::move(h));
}

void client_impl::do_volume_update_metadata(e2b::volume_ref volume, std::string path, e2b::volume_metadata metadata,
                                            completion_handler<e2b::volume_entry> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self, e2b::volume_ref vol, std::string path,
           e2b::volume_metadata m) -> asio::awaitable<result<e2b::volume_entry>> {
            json::object b;
            if (m.uid) b["uid"] = *m.uid;
            if (m.gid) b["gid"] = *m.gid;
            if (m.mode) b["mode"] = *m.mode;
            std::optional<std::string> body = json::serialize(b);
            auto r = co_await self->volume_call("PATCH", "path", vol, path_query(path), std::move(body),
                                                "application/json", true);
            co_return entry_of(r, "volume update metadata");
        }(this, std::move(volume), std::move(path), std::move(metadata)),
        std::move(h));
}

void client_impl::do_volume_read_file(e2b::volume_ref volume, std::string path, completion_handler<std::string> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self, e2b::volume_ref vol, std::string path) -> asio::awaitable<result<std::string>> {
            auto r = co_await self->volume_call("GET", "file", vol, path_query(path), std::nullopt, "", true);
            if (!r) co_return r.error();
            co_return std::move(r->body);
        }(this, std::move(volume), std::move(path)),
        std::move(h));
}

void client_impl::do_volume_write_file(e2b::volume_ref volume, std::string path, std::string data,
                                       e2b::volume_write_options options, completion_handler<e2b::volume_entry> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self, e2b::volume_ref vol, std::string path, std::string data,
           e2b::volume_write_options o) -> asio::awaitable<result<e2b::volume_entry>> {
            std::string q = path_query(path);
            add_metadata(q, o.metadata);
            if (o.force) rest::append_query(q, "force", "true");
            std::optional<std::string> body = std::move(data);
            // Idempotent: the same bytes written again leave the same file.
            auto r = co_await self->volume_call("PUT", "file", vol, std::move(q), std::move(body),
                                                "application/octet-stream", true);
            co_return entry_of(r, "volume write file");
        }(this, std::move(volume), std::move(path), std::move(data), std::move(options)),
        std::move(h));
}

void client_impl::do_volume_remove(e2b::volume_ref volume, std::string path, completion_handler<void> h)
{
    detail::spawn_op(
        get_executor(),
        [](client_impl* self, e2b::volume_ref vol, std::string path) -> asio::awaitable<result<void>> {
            auto r = co_await self->volume_call("DELETE", "path", vol, path_query(path), std::nullopt, "", false);
            if (!r) co_return r.error();
            co_return result<void>{};
        }(this, std::move(volume), std::move(path)),
        std::move(h));
}

}  // namespace prism_e2b::wire
