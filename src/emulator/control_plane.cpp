// Control-plane REST routes (e2b-spec/openapi.yml): create, info, list v2,
// kill, pause, connect, legacy resume, timeout, fork. X-API-KEY required.
#include "emulator/server_state.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <sys/statvfs.h>
#include <thread>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr std::int64_t max_timeout_seconds = 86400;

struct parsed_body {
    json::object obj;
    std::optional<http_response> err;
};

/// Parses a JSON object body; an empty body is an empty object when allowed.
parsed_body parse_object(std::string const& body, bool empty_ok)
{
    parsed_body out;
    if (body.empty()) {
        if (!empty_ok) out.err = rest_error(400, "request body is required");
        return out;
    }
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    if (ec) {
        out.err = rest_error(400, "request body is not valid JSON: " + ec.message());
        return out;
    }
    if (!v.is_object()) {
        out.err = rest_error(400, "request body must be a JSON object");
        return out;
    }
    out.obj = std::move(v.as_object());
    return out;
}

/// Reads an optional integer field; error text when present but not an integer.
std::optional<std::string> get_int(json::object const& o, std::string_view key, std::optional<std::int64_t>& out)
{
    auto it = o.find(key);
    if (it == o.end() || it->value().is_null()) return std::nullopt;
    auto const& v = it->value();
    if (v.is_int64())
        out = v.as_int64();
    else if (v.is_uint64() && v.as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        out = static_cast<std::int64_t>(v.as_uint64());
    // Range before the cast: converting 1e300 is undefined behaviour. 2^63 itself is out of range.
    else if (v.is_double() && v.as_double() >= -9223372036854775808.0 && v.as_double() < 9223372036854775808.0 &&
             v.as_double() == std::trunc(v.as_double()))
        out = static_cast<std::int64_t>(v.as_double());
    else
        return std::string("field '") + std::string(key) + "' must be an integer";
    return std::nullopt;
}

std::optional<std::string> get_bool(json::object const& o, std::string_view key, std::optional<bool>& out)
{
    auto it = o.find(key);
    if (it == o.end() || it->value().is_null()) return std::nullopt;
    if (!it->value().is_bool()) return std::string("field '") + std::string(key) + "' must be a boolean";
    out = it->value().as_bool();
    return std::nullopt;
}

std::optional<std::string> get_string_map(json::object const& o, std::string_view key,
                                          std::map<std::string, std::string>& out)
{
    auto it = o.find(key);
    if (it == o.end() || it->value().is_null()) return std::nullopt;
    if (!it->value().is_object()) return std::string("field '") + std::string(key) + "' must be an object of strings";
    for (auto const& [k, v] : it->value().as_object()) {
        if (!v.is_string()) return std::string("field '") + std::string(key) + "' must be an object of strings";
        out[std::string(k)] = std::string(v.as_string());
    }
    return std::nullopt;
}

std::optional<std::string> validate_timeout(std::optional<std::int64_t> t)
{
    if (t && (*t < 0 || *t > max_timeout_seconds))
        return "timeout must be between 0 and " + std::to_string(max_timeout_seconds) + " seconds";
    return std::nullopt;
}

json::object sandbox_json(server_state const& st, sandbox const& sb)
{
    json::object o;
    o["templateID"] = sb.template_id;
    o["alias"] = sb.template_id;
    o["sandboxID"] = sb.id;
    o["clientID"] = "prism-e2b-local";
    o["envdVersion"] = st.opts.envd_version;
    o["envdAccessToken"] = sb.access_token;
    o["trafficAccessToken"] = nullptr;
    o["domain"] = nullptr;
    return o;
}

std::uint32_t memory_mb()
{
    long const pages = ::sysconf(_SC_PHYS_PAGES);
    long const page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<std::uint32_t>(
                                       (static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)) >> 20)
                                 : 0;
}

std::uint32_t disk_mb(std::filesystem::path const& p)
{
    struct statvfs s {};
    if (::statvfs(p.c_str(), &s) != 0) return 0;
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(s.f_blocks) * s.f_frsize) >> 20);
}

/// SandboxDetail (detail = true) or ListedSandbox. Takes sb.mutex.
json::object detail_json(server_state const& st, sandbox const& sb, bool detail)
{
    json::object o;
    o["templateID"] = sb.template_id;
    o["alias"] = sb.template_id;
    o["sandboxID"] = sb.id;
    o["clientID"] = "prism-e2b-local";
    o["startedAt"] = rfc3339(sb.started_at);
    if (sb.limit_cgroups.empty()) {
        o["cpuCount"] = std::max(1u, std::thread::hardware_concurrency());
        o["memoryMB"] = memory_mb();
    } else {  // the namespaces engine: what the sandbox's cgroups allow
        auto const limits = read_sandbox_limits(sb.limit_cgroups);
        o["cpuCount"] = limits.cpu_count;
        o["memoryMB"] = limits.memory_mb;
    }
    o["diskSizeMB"] = sb.disk_mb ? sb.disk_mb : disk_mb(st.state_dir);
    o["envdVersion"] = st.opts.envd_version;
    json::object md;
    for (auto const& [k, v] : sb.metadata) md[k] = v;
    o["metadata"] = std::move(md);
    json::array mounts;
    for (auto const& m : sb.volume_mounts) mounts.push_back(json::object{{"name", m.name}, {"path", m.path}});
    o["volumeMounts"] = std::move(mounts);
    {
        std::lock_guard lk(sb.mutex);
        o["endAt"] = rfc3339(sb.end_at);
        o["state"] = sb.state == sandbox_state::running ? "running" : "paused";
    }
    if (detail) {
        o["envdAccessToken"] = sb.access_token;
        o["domain"] = nullptr;
        o["allowInternetAccess"] = sb.internet;
        json::object lc;
        lc["autoResume"] = sb.auto_resume;
        lc["onTimeout"] = sb.auto_pause ? "pause" : "kill";
        o["lifecycle"] = std::move(lc);
        // Not part of E2B's schema: what this server uses to keep sandboxes apart.
        o["isolation"] = sb.isolation;
        o["envd"] = sb.agent ? "in-sandbox" : "in-server";  // namespaces: prism-e2b-envd inside the sandbox
        // What the engine enforces for this sandbox (false: not enforced here, see docs/local-server.md).
        json::object enforced;
        auto const engine = st.engine->enforced();
        enforced["rootless"] = engine.rootless;
        enforced["distinctUsers"] = engine.distinct_users;  // root and "user" differ
        enforced["memoryLimit"] = !sb.limit_cgroups.empty();
        enforced["cpuLimit"] = !sb.limit_cgroups.empty();
        enforced["pidsLimit"] = !sb.limit_cgroups.empty() || engine.pids_limited;
        enforced["diskQuota"] = sb.disk_mb != 0;
        o["isolationEnforced"] = std::move(enforced);
        std::lock_guard lk(sb.mutex);
        if (sb.state == sandbox_state::paused)
            o["pauseKind"] =
                sb.paused_with_memory ? (sb.freeze_method.empty() ? "memory" : sb.freeze_method) : "filesystem";
        if (sb.state == sandbox_state::paused && sb.paused_with_memory)
            if (auto const bytes = st.engine->memory_image_bytes(sb))
                o["memorySnapshotBytes"] = *bytes;  // its memory image on disk
    }
    return o;
}

http_response not_found(std::string const& id)
{
    return rest_error(404, "sandbox \"" + id + "\" doesn't exist or you don't have access to it");
}

/// What NewSandbox(V2) asks for that this server cannot honour: refused with a 400, never
/// ignored (egress rules and workload identity change what the sandbox may reach).
std::optional<std::string> unsupported_create_fields(json::object const& o)
{
    auto const present = [&](char const* k) -> json::value const* {
        auto it = o.find(k);
        return it == o.end() || it->value().is_null() ? nullptr : &it->value();
    };
    auto const empty = [](json::value const& v) {
        return v.is_null() || (v.is_array() && v.as_array().empty()) || (v.is_object() && v.as_object().empty());
    };
    if (auto const* n = present("network")) {
        if (!n->is_object()) return std::string("network must be an object");
        for (auto const& [k, v] : n->as_object()) {
            // No public sandbox URLs here (every envd call needs its access token): nothing to hide or mask.
            if (k == "allowPublicTraffic" || k == "maskRequestHost" || empty(v)) continue;
            return "network." + std::string(k) +
                   " is not supported by prism-e2b-local: it cannot enforce egress rules (use "
                   "allow_internet_access)";
        }
    }
    if (auto const* iam = present("iam"); iam && !empty(*iam))
        return std::string("iam (workload identity tokens) is not supported by prism-e2b-local");
    if (auto const* mcp = present("mcp"); mcp && !empty(*mcp))
        return std::string("mcp is not supported by prism-e2b-local");
    return std::nullopt;
}

/// NewSandbox's volumeMounts ([{name, path}]) into `out`; the error otherwise. Mounting needs an
/// engine with a mount namespace of the sandbox's own and, for its ids, idmapped mounts (root).
std::optional<std::string> get_volume_mounts(server_state const& st, json::object const& o,
                                             std::vector<volume_mount>& out)
{
    auto it = o.find("volumeMounts");
    if (it == o.end() || it->value().is_null()) return std::nullopt;
    if (!it->value().is_array()) return std::string("volumeMounts must be an array of {name, path}");
    auto const& arr = it->value().as_array();
    if (arr.empty()) return std::nullopt;
    if (auto problem = st.engine->volume_mount_problem()) return "volumeMounts: " + *problem;
    for (auto const& m : arr) {
        auto const* mo = m.if_object();
        auto const* name = mo ? mo->if_contains("name") : nullptr;
        auto const* path = mo ? mo->if_contains("path") : nullptr;
        if (!name || !name->is_string() || !path || !path->is_string())
            return std::string("volumeMounts must be an array of {name, path}");
        std::string const p(path->as_string());
        if (auto why = volume_mount_path_problem(p)) return "volumeMounts: path \"" + p + "\" " + *why;
        auto v = st.volumes.find_by_name(name->as_string());
        if (!v) return "volumeMounts: volume \"" + std::string(name->as_string()) + "\" not found";
        for (auto const& prev : out) {
            auto const under = [](std::string const& a, std::string const& b) {
                return a == b || (a.size() > b.size() && a.rfind(b, 0) == 0 && a[b.size()] == '/');
            };
            if (under(p, prev.path) || under(prev.path, p))
                return "volumeMounts: " + prev.path + " and " + p + " overlap";
        }
        out.push_back(volume_mount{v->name, v->id, p});
    }
    return std::nullopt;
}

/// POST /sandboxes (v1: timeout defaults to 15 s) and POST /v2/sandboxes (300 s), E2B's
/// defaults supplied here: the SDK since 2.51 no longer sends its own.
asio::awaitable<void> create(std::shared_ptr<server_state> st, http_request const& req, response_sink& sink,
                             std::chrono::seconds default_timeout)
{
    if (auto retry = st->faults.take_create_throttle()) {
        auto r = rest_error(429, "rate limit exceeded (injected fault)");
        r.headers.emplace_back("Retry-After", std::to_string(retry->count()));
        co_await sink.send(std::move(r));
        co_return;
    }
    auto body = parse_object(req.body, false);
    if (body.err) {
        co_await sink.send(std::move(*body.err));
        co_return;
    }
    auto const& o = body.obj;
    auto tit = o.find("templateID");
    if (tit == o.end() || !tit->value().is_string() || tit->value().as_string().empty()) {
        co_await sink.send(rest_error(400, "templateID is required"));
        co_return;
    }
    std::optional<std::int64_t> timeout;
    std::optional<bool> auto_pause, auto_pause_memory, allow_internet;
    bool auto_resume = false;
    std::map<std::string, std::string> metadata, env_vars;
    std::vector<volume_mount> mounts;
    std::optional<std::string> e;
    if ((e = get_int(o, "timeout", timeout)) || (e = validate_timeout(timeout)) ||
        (e = get_bool(o, "autoPause", auto_pause)) || (e = get_bool(o, "autoPauseMemory", auto_pause_memory)) ||
        (e = get_string_map(o, "metadata", metadata)) || (e = get_string_map(o, "envVars", env_vars)) ||
        (e = get_bool(o, "allow_internet_access", allow_internet)) || (e = unsupported_create_fields(o)) ||
        (e = get_volume_mounts(*st, o, mounts))) {
        co_await sink.send(rest_error(400, *e));
        co_return;
    }
    if (auto it = o.find("autoResume"); it != o.end() && !it->value().is_null()) {
        std::optional<bool> en;
        if (!it->value().is_object() || get_bool(it->value().as_object(), "enabled", en)) {
            co_await sink.send(rest_error(400, "autoResume must be an object {\"enabled\": <bool>}"));
            co_return;
        }
        auto_resume = en.value_or(false);
    }
    auto tpl = st->resolve_template(std::string(tit->value().as_string()));
    if (!tpl) {
        // E2B answers an unknown template 404 (the SDK: SandboxError "404: ...").
        http_response er = rest_error(tpl.error() == errc::not_found ? 404 : 400, tpl.error().message());
        co_await sink.send(std::move(er));
        co_return;
    }
    auto sb = st->create_sandbox(*tpl, std::move(metadata), std::move(env_vars),
                                 timeout ? std::chrono::seconds(*timeout) : default_timeout, auto_pause.value_or(false),
                                 auto_pause_memory.value_or(true), auto_resume, allow_internet.value_or(true),
                                 std::move(mounts));
    if (!sb) {
        http_response er = rest_error(sb.error() == errc::service_busy ? 503 : 500, sb.error().message());
        co_await sink.send(std::move(er));
        co_return;
    }
    co_await sink.send(json_response(201, sandbox_json(*st, **sb)));
}

/// Forks one request may ask for (E2B caps it too; each fork is a whole sandbox).
constexpr std::int64_t max_fork_count = 16;

/// POST /sandboxes/{id}/fork: the source is snapshotted once (its files; on gvisor its memory and
/// processes too, the source running on) and `count` sandboxes (default 1) start from that
/// snapshot with `timeout` (default 15 s, E2B's); one result each, a sandbox or an error.
/// The snapshot is a temporary one: removed once the forks have their own copies.
http_response fork(server_state& st, std::shared_ptr<sandbox> const& sb, std::string const& id, json::object const& o)
{
    std::optional<std::int64_t> count, timeout;
    std::optional<std::string> e;
    if ((e = get_int(o, "count", count)) || (e = get_int(o, "timeout", timeout)) || (e = validate_timeout(timeout)))
        return rest_error(400, *e);
    if (count && (*count < 1 || *count > max_fork_count))
        return rest_error(400, "count must be between 1 and " + std::to_string(max_fork_count));
    if (!sb) return not_found(id);
    bool auto_pause = false, auto_pause_memory = true, auto_resume = false;
    {
        std::lock_guard lk(sb->mutex);
        if (sb->state == sandbox_state::paused)
            return rest_error(409, "sandbox \"" + id + "\" is paused: connect to it before forking it");
        auto_pause = sb->auto_pause;
        auto_pause_memory = sb->auto_pause_memory;
        auto_resume = sb->auto_resume;
    }
    auto snap = take_snapshot(st, sb, "");
    if (!snap) return snap.error() == errc::not_found ? not_found(id) : rest_error(500, snap.error().message());
    auto tpl = st.resolve_template(snap->snapshot_id());
    if (tpl) tpl->id = sb->template_id;  // the forks' template is the source's: the snapshot goes below
    json::array results;
    for (std::int64_t i = 0; i < count.value_or(1); ++i) {
        json::object r;
        auto made = tpl ? st.create_sandbox(*tpl, sb->metadata, {}, std::chrono::seconds(timeout.value_or(15)),
                                            auto_pause, auto_pause_memory, auto_resume, sb->internet, sb->volume_mounts)
                        : result<std::shared_ptr<sandbox>>(tpl.error());
        if (made) {
            r["sandbox"] = sandbox_json(st, **made);
        } else {
            json::object err;
            err["code"] = made.error() == errc::service_busy ? 503 : 500;
            err["message"] = made.error().message();
            r["error"] = std::move(err);
        }
        results.emplace_back(std::move(r));
    }
    st.snapshots.remove(snap->snapshot_id());
    st.log(log_level::info, "prism-e2b-local: forked sandbox " + id + " " + std::to_string(count.value_or(1)) +
                                " time(s) (" + (snap->memory ? "files and memory)" : "files)"));
    return json_response(201, results);
}

struct list_query {
    std::vector<std::pair<std::string, std::string>> metadata;
    std::set<std::string> states;
    std::size_t limit = 100;
    std::optional<std::uint64_t> next;
    bool asc = false;
    std::optional<std::string> template_id;
    std::optional<std::chrono::system_clock::time_point> started_after;
};

/// Parses the v2 list query (no coroutine: GCC 12 mishandles range-for temporaries around co_await).
std::optional<std::string> parse_list_query(std::string const& query, list_query& q)
{
    auto const params = parse_query(query);
    for (auto const& [k, v] : params) {
        if (k == "metadata") {
            // "k=v&k2=v2" whose keys and values were URL-encoded once more by the client.
            auto const pairs = parse_query(v);
            for (auto const& [mk, mv] : pairs) q.metadata.emplace_back(url_decode(mk), url_decode(mv));
        } else if (k == "state") {
            std::size_t i = 0;
            while (i <= v.size()) {
                auto j = v.find(',', i);
                if (j == std::string::npos) j = v.size();
                auto s = v.substr(i, j - i);
                if (!s.empty()) {
                    if (s != "running" && s != "paused") return "invalid state filter '" + s + "'";
                    q.states.insert(s);
                }
                i = j + 1;
            }
        } else if (k == "limit") {
            char* endp = nullptr;
            long const n = std::strtol(v.c_str(), &endp, 10);
            if (v.empty() || *endp != '\0' || n < 1 || n > 100) return "limit must be between 1 and 100";
            q.limit = static_cast<std::size_t>(n);
        } else if (k == "nextToken") {
            char* endp = nullptr;
            unsigned long long const n = std::strtoull(v.c_str(), &endp, 10);
            if (v.empty() || *endp != '\0') return "invalid nextToken";
            q.next = n;
        } else if (k == "template") {
            q.template_id = v;
        } else if (k == "startedAfter") {
            q.started_after = parse_rfc3339(v);
            if (!q.started_after) return "startedAfter must be an RFC 3339 timestamp";
        } else if (k == "order") {
            if (v != "asc" && v != "desc") return "order must be asc or desc";
            q.asc = v == "asc";
        }
    }
    return std::nullopt;
}

struct list_result {
    json::array page;
    std::optional<std::uint64_t> next;
    std::size_t total_running = 0;  ///< running sandboxes, whatever the filters (X-Total-Running)
};

/// The page of sandboxes and the next token (no coroutine, see above).
list_result list_page(server_state const& st, list_query q, bool legacy)
{
    if (legacy) q.states = {"running"};
    std::vector<std::shared_ptr<sandbox>> all;
    {
        std::lock_guard lk(st.mutex);
        for (auto const& [id, sb] : st.sandboxes) all.push_back(sb);
    }
    std::sort(all.begin(), all.end(),
              [&q](auto const& a, auto const& b) { return q.asc ? a->seq < b->seq : a->seq > b->seq; });
    json::array out;
    std::optional<std::uint64_t> token;
    std::size_t running = 0;
    for (auto const& sb : all) {
        std::lock_guard lk(sb->mutex);
        if (!sb->gone && sb->state == sandbox_state::running) ++running;
    }
    for (auto const& sb : all) {
        if (q.next && (q.asc ? sb->seq < *q.next : sb->seq > *q.next)) continue;
        bool match = (!q.template_id || sb->template_id == *q.template_id) &&
                     (!q.started_after || sb->started_at >= *q.started_after);
        for (auto const& [mk, mv] : q.metadata) {
            auto it = sb->metadata.find(mk);
            if (it == sb->metadata.end() || it->second != mv) match = false;
        }
        if (!match) continue;
        if (!q.states.empty()) {
            std::lock_guard lk(sb->mutex);
            if (!q.states.count(sb->state == sandbox_state::running ? "running" : "paused")) continue;
        }
        if (!legacy && out.size() == q.limit) {
            token = sb->seq;
            break;
        }
        out.push_back(detail_json(st, *sb, false));
    }
    return {std::move(out), token, running};
}

asio::awaitable<void> list_v2(std::shared_ptr<server_state> st, http_request const& req, response_sink& sink,
                              bool legacy)
{
    list_query q;
    if (auto e = parse_list_query(req.query, q)) {
        http_response er = rest_error(400, *e);
        co_await sink.send(std::move(er));
        co_return;
    }
    auto page = list_page(*st, std::move(q), legacy);
    http_response r = json_response(200, page.page);
    if (page.next) r.headers.emplace_back("X-Next-Token", std::to_string(*page.next));
    r.headers.emplace_back("X-Total-Running", std::to_string(page.total_running));
    co_await sink.send(std::move(r));
}

}  // namespace

asio::awaitable<void> handle_control(std::shared_ptr<server_state> st, http_request req, response_sink& sink)
{
    if (req.path == "/health" && req.method == "GET") {
        http_response r;
        r.body = R"({"message":"ok"})";
        co_await sink.send(std::move(r));
        co_return;
    }
    // X-API-KEY was judged by dispatch's refusal() (local_server.cpp), from the head.
    auto const& path = req.path;
    auto const& m = req.method;
    if (path == "/sandboxes" || path == "/sandboxes/") {
        if (m == "POST")
            co_await create(st, req, sink, std::chrono::seconds(15));
        else if (m == "GET")
            co_await list_v2(st, req, sink, true);
        else
            co_await sink.send(rest_error(405, "method not allowed"));
        co_return;
    }
    if (path == "/v2/sandboxes") {
        if (m == "GET")
            co_await list_v2(st, req, sink, false);
        else if (m == "POST")
            co_await create(st, req, sink, std::chrono::seconds(300));
        else
            co_await sink.send(rest_error(405, "method not allowed"));
        co_return;
    }
    if (co_await handle_snapshot_routes(st, req, sink) || co_await handle_volume_routes(st, req, sink) ||
        co_await handle_metrics_routes(st, req, sink) || co_await handle_log_routes(st, req, sink))
        co_return;
    std::string_view rest(path);
    // v2 connect: the body may be omitted, an omitted timeout is 300 s.
    bool const v2 = rest.rfind("/v2/sandboxes/", 0) == 0;
    if (v2) rest.remove_prefix(3);
    if (rest.rfind("/sandboxes/", 0) != 0) {
        co_await sink.send(rest_error(404, "no such route"));
        co_return;
    }
    rest.remove_prefix(11);
    auto const slash = rest.find('/');
    std::string const id(rest.substr(0, slash));
    std::string const action = slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash + 1));
    if (id.empty() || (v2 && action != "connect")) {
        co_await sink.send(rest_error(404, "no such route"));
        co_return;
    }
    auto sb = st->find(id);

    if (action.empty()) {
        if (m == "GET") {
            http_response r = sb ? json_response(200, detail_json(*st, *sb, true)) : not_found(id);
            co_await sink.send(std::move(r));
        } else if (m == "DELETE") {
            if (!sb) {
                co_await sink.send(not_found(id));
                co_return;
            }
            st->kill_sandbox(sb);
            http_response r;
            r.status = 204;
            co_await sink.send(std::move(r));
        } else {
            co_await sink.send(rest_error(405, "method not allowed"));
        }
        co_return;
    }
    if (m == "PUT" && action == "network") {
        // Egress rules need a network of the sandbox's own with a filter: not built here.
        http_response r = sb ? rest_error(501,
                                          "unimplemented: prism-e2b-local cannot change a sandbox's network "
                                          "settings after create (only allow_internet_access at create)")
                             : not_found(id);
        co_await sink.send(std::move(r));
        co_return;
    }
    if (m != "POST") {
        co_await sink.send(rest_error(405, "method not allowed"));
        co_return;
    }
    auto body = parse_object(req.body, action != "connect" || v2);
    if (body.err) {
        co_await sink.send(std::move(*body.err));
        co_return;
    }
    auto const& o = body.obj;
    if (action == "fork") {
        co_await sink.send(fork(*st, sb, id, o));
        co_return;
    }
    if (action == "pause") {
        std::optional<bool> memory;
        if (auto e = get_bool(o, "memory", memory)) {
            co_await sink.send(rest_error(400, *e));
            co_return;
        }
        if (!sb) {
            co_await sink.send(not_found(id));
            co_return;
        }
        if (st->faults.take_pause_failure()) {
            co_await sink.send(rest_error(503, "the service is busy, try again later (injected fault)"));
            co_return;
        }
        auto r = st->pause_sandbox(sb, memory.value_or(true));
        if (!r) {
            // A conflict other than "already paused": the gvisor engine cannot snapshot this sandbox.
            bool const already = r.error().message().find("already paused") != std::string::npos;
            std::string const why = already ? "sandbox \"" + id + "\" is already paused" : r.error().message();
            if (r.error() == errc::conflict)
                co_await sink.send(rest_error(409, why));  // named first: g++ 12 and temporaries in co_await
            else if (r.error() == errc::server_error)
                co_await sink.send(rest_error(500, why));
            else
                co_await sink.send(not_found(id));
            co_return;
        }
        http_response ok;
        ok.status = 204;
        co_await sink.send(std::move(ok));
        co_return;
    }
    if (action == "connect" || action == "resume" || action == "timeout") {
        std::optional<std::int64_t> timeout;
        std::optional<bool> memory;
        std::optional<std::string> e;
        if ((e = get_int(o, "timeout", timeout)) || (e = validate_timeout(timeout)) ||
            (e = get_bool(o, "memory", memory))) {
            co_await sink.send(rest_error(400, *e));
            co_return;
        }
        if (v2 && !timeout) timeout = 300;
        if ((action == "connect" || action == "timeout") && !timeout) {
            co_await sink.send(rest_error(400, "timeout is required"));
            co_return;
        }
        if (!sb) {
            co_await sink.send(not_found(id));
            co_return;
        }
        auto const secs = std::chrono::seconds(timeout.value_or(15));
        if (action == "timeout") {
            {
                std::lock_guard lk(sb->mutex);
                sb->end_at = std::chrono::system_clock::now() + secs;
            }
            st->persist(*sb);
            http_response ok;
            ok.status = 204;
            co_await sink.send(std::move(ok));
            co_return;
        }
        bool paused = false;
        {
            std::lock_guard lk(sb->mutex);
            paused = sb->state == sandbox_state::paused;
            if (!paused && action == "connect") {
                // Running: the TTL is only ever extended.
                sb->end_at = std::max(sb->end_at, std::chrono::system_clock::now() + secs);
            }
        }
        if (!paused) {
            if (action == "connect") st->persist(*sb);
            if (action == "resume")
                co_await sink.send(rest_error(409, "sandbox \"" + id + "\" is already running"));
            else
                co_await sink.send(json_response(200, sandbox_json(*st, *sb)));
            co_return;
        }
        if (memory && !*memory) {
            // Resume from disk only: drop the frozen processes, then boot.
            std::map<std::uint32_t, std::shared_ptr<process>> procs;
            {
                std::lock_guard lk(sb->mutex);
                procs.swap(sb->processes);
                sb->running = 0;
                if (st->engine->boots()) {  // a reboot: new init, boot id
                    sb->paused_with_memory = false;
                    st->halt_sandbox(*sb);
                }
            }
            for (auto& [pid, p] : procs) p->kill_and_abort_watchers();
        }
        if (auto resumed = st->resume_sandbox(sb, secs); !resumed) {
            co_await sink.send(rest_error(500, resumed.error().message()));
            co_return;
        }
        co_await sink.send(json_response(201, sandbox_json(*st, *sb)));
        co_return;
    }
    co_await sink.send(rest_error(404, "no such route"));
}

}  // namespace prism_e2b::local::detail
