// The snapshot API (openapi.yml): POST /sandboxes/{id}/snapshots, GET /snapshots
// (sandboxID, name, limit, nextToken), DELETE /templates/{id} (how the SDK deletes one).
#include "emulator/server_state.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

json::object snapshot_info(snapshot_record const& r)
{
    json::object o;
    o["snapshotID"] = r.snapshot_id();
    json::array names;
    names.emplace_back(r.snapshot_id());
    o["names"] = std::move(names);
    return o;
}

/// The sandbox's settings, as a template a snapshot of it starts new sandboxes with.
template_spec spec_of(sandbox const& sb)
{
    template_spec t;
    t.id = sb.template_id;
    t.limits = sb.limits;
    t.disk_mb = sb.disk_mb;
    t.user = sb.default_user;
    t.env_vars = sb.env_vars;
    t.start_cmd = sb.start_cmd;
    return t;
}

http_response create_snapshot(server_state& st, std::string const& id, std::string const& body)
{
    std::optional<std::string> name;
    if (!body.empty()) {
        boost::system::error_code ec;
        auto v = json::parse(body, ec);
        if (ec || !v.is_object()) return rest_error(400, "request body must be a JSON object");
        if (auto const* n = v.as_object().if_contains("name"); n && !n->is_null()) {
            if (!n->is_string() || !valid_snapshot_name(n->as_string()))
                return rest_error(400, "name must be 1 to 64 of [A-Za-z0-9_.-], not starting with '.', not \"base\"");
            name = std::string(n->as_string());
        }
    }
    auto sb = st.find(id);
    if (!sb) return rest_error(404, "sandbox \"" + id + "\" doesn't exist or you don't have access to it");
    auto made = take_snapshot(st, sb, name.value_or(""));
    if (!made) {
        if (made.error() == errc::not_found)
            return rest_error(404, "sandbox \"" + id + "\" doesn't exist or you don't have access to it");
        return rest_error(500, made.error().message());
    }
    st.log(log_level::info, "prism-e2b-local: snapshot " + made->snapshot_id() + " of sandbox " + id +
                                (made->memory ? " (files and memory)" : " (files)"));
    return json_response(201, snapshot_info(*made));
}

/// "team/name:tag" -> does it name `r`? (no teams here: the namespace is ignored)
bool name_matches(snapshot_record const& r, std::string_view wanted)
{
    if (auto slash = wanted.rfind('/'); slash != std::string_view::npos) wanted.remove_prefix(slash + 1);
    if (wanted.ends_with(":default")) wanted.remove_suffix(8);
    return wanted == r.key || (!r.name.empty() && wanted == r.name);
}

http_response list_snapshots(server_state const& st, std::string const& query)
{
    std::optional<std::string> sandbox_id, name;
    std::size_t limit = 100;
    std::optional<std::uint64_t> next;
    for (auto const& [k, v] : parse_query(query)) {
        char* endp = nullptr;
        if (k == "sandboxID") {
            sandbox_id = v;
        } else if (k == "name") {
            name = v;
        } else if (k == "limit") {
            long const n = std::strtol(v.c_str(), &endp, 10);
            if (v.empty() || *endp != '\0' || n < 1 || n > 100)
                return rest_error(400, "limit must be between 1 and 100");
            limit = static_cast<std::size_t>(n);
        } else if (k == "nextToken") {
            unsigned long long const n = std::strtoull(v.c_str(), &endp, 10);
            if (v.empty() || *endp != '\0') return rest_error(400, "invalid nextToken");
            next = n;
        }
    }
    if (sandbox_id && name) return rest_error(400, "filter by sandboxID or by name, not both");
    auto all = st.snapshots.list();
    std::reverse(all.begin(), all.end());  // newest first, as sandboxes are listed
    json::array page;
    std::optional<std::uint64_t> token;
    for (auto const& r : all) {
        if (next && r.seq > *next) continue;
        if ((sandbox_id && r.sandbox_id != *sandbox_id) || (name && !name_matches(r, *name))) continue;
        if (page.size() == limit) {
            token = r.seq;
            break;
        }
        page.push_back(snapshot_info(r));
    }
    http_response res = json_response(200, page);
    if (token) res.headers.emplace_back("X-Next-Token", std::to_string(*token));
    return res;
}

http_response delete_template(server_state& st, std::string const& id)
{
    if (st.snapshots.remove(id)) {
        st.log(log_level::info, "prism-e2b-local: deleted snapshot " + id);
        http_response r;
        r.status = 204;
        r.content_type.clear();
        return r;
    }
    if (auto t = find_template(st.templates_dir, id, st.ns_defaults); t && t->id != "base")
        return rest_error(400, "template \"" + id + "\" is a file of the server (" + st.templates_dir.string() +
                                   "): remove the file to delete it");
    return rest_error(404, "template '" + id + "' not found");
}

}  // namespace

result<snapshot_record> take_snapshot(server_state& st, std::shared_ptr<sandbox> const& sb, std::string name)
{
    snapshot_record rec;
    rec.name = std::move(name);
    rec.sandbox_id = sb->id;
    rec.spec = spec_of(*sb);
    return st.snapshots.add(std::move(rec),
                            [&](std::filesystem::path const& dir) { return st.capture_snapshot(sb, dir); });
}

asio::awaitable<bool> handle_snapshot_routes(std::shared_ptr<server_state> st, http_request const& req,
                                             response_sink& sink)
{
    std::string_view path(req.path);
    std::optional<http_response> r;
    if (path == "/snapshots") {
        r = req.method == "GET" ? list_snapshots(*st, req.query) : rest_error(405, "method not allowed");
    } else if (path.rfind("/templates/", 0) == 0 && path.size() > 11 && path.find('/', 11) == std::string_view::npos) {
        r = req.method == "DELETE" ? delete_template(*st, std::string(path.substr(11)))
                                   : rest_error(405, "method not allowed");
    } else if (auto id = sandbox_route_id(path, "/snapshots")) {
        r = req.method == "POST" ? create_snapshot(*st, *id, req.body) : rest_error(405, "method not allowed");
    }
    if (!r) co_return false;
    co_await sink.send(std::move(*r));
    co_return true;
}

}  // namespace prism_e2b::local::detail
