// GET /v2/sandboxes/{id}/logs (and the deprecated /sandboxes/{id}/logs): the
// sandbox's lifecycle as log entries, the only log prism-e2b-local keeps of a
// sandbox (its processes' output goes to their streams, not to a log). The
// query's cursor, limit, direction, level and search filter them as the spec says.
#include "emulator/server_state.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

struct log_entry {
    std::chrono::system_clock::time_point at;
    std::string level;
    std::string message;
    json::object fields;
};

int level_rank(std::string_view l) { return l == "debug" ? 0 : l == "info" ? 1 : l == "warn" ? 2 : 3; }

std::vector<log_entry> lifecycle_entries(sandbox& sb)
{
    std::lock_guard lk(sb.mutex);
    std::vector<log_entry> out;
    out.push_back({sb.started_at, "info", "sandbox started from template " + sb.template_id,
                   json::object{{"sandboxID", sb.id}, {"templateID", sb.template_id}}});
    if (sb.state == sandbox_state::paused)
        out.push_back(
            {std::chrono::system_clock::now(), "info",
             sb.paused_with_memory ? "sandbox is paused with its memory" : "sandbox is paused (filesystem only)",
             json::object{{"sandboxID", sb.id}}});
    return out;
}

http_response logs_answer(server_state& st, std::string const& id, std::string_view query, bool v2)
{
    auto sb = st.find(id);
    if (!sb) return rest_error(404, "sandbox \"" + id + "\" not found");
    std::optional<std::int64_t> cursor;
    std::size_t limit = 1000;
    bool backward = false;
    std::string min_level = "debug", search;
    for (auto const& [k, v] : parse_query(query)) {
        char* end = nullptr;
        if (k == "cursor" || k == "start") {
            long long const n = std::strtoll(v.c_str(), &end, 10);
            if (v.empty() || *end || n < 0) return rest_error(400, k + " must be a non-negative integer");
            cursor = n;
        } else if (k == "limit") {
            long long const n = std::strtoll(v.c_str(), &end, 10);
            if (v.empty() || *end || n < 0 || n > 1000) return rest_error(400, "limit must be 0..1000");
            limit = static_cast<std::size_t>(n);
        } else if (k == "direction") {
            if (v != "forward" && v != "backward") return rest_error(400, "direction must be forward or backward");
            backward = v == "backward";
        } else if (k == "level") {
            if (v != "debug" && v != "info" && v != "warn" && v != "error")
                return rest_error(400, "level must be debug, info, warn or error");
            min_level = v;
        } else if (k == "search") {
            if (v.size() > 256) return rest_error(400, "search is longer than 256");
            search = v;
        }
    }
    auto entries = lifecycle_entries(*sb);
    std::erase_if(entries, [&](log_entry const& e) {
        auto const ms = std::chrono::duration_cast<std::chrono::milliseconds>(e.at.time_since_epoch()).count();
        return (cursor && ms < *cursor) || level_rank(e.level) < level_rank(min_level) ||
               (!search.empty() && e.message.find(search) == std::string::npos);
    });
    if (backward) std::reverse(entries.begin(), entries.end());
    if (entries.size() > limit) entries.resize(limit);
    json::array structured, plain;
    for (auto const& e : entries) {
        structured.push_back(json::object{
            {"timestamp", rfc3339(e.at)}, {"level", e.level}, {"message", e.message}, {"fields", e.fields}});
        plain.push_back(json::object{{"timestamp", rfc3339(e.at)}, {"line", e.message}});
    }
    json::object body;
    if (v2) {
        body["logs"] = std::move(structured);
    } else {
        body["logs"] = std::move(plain);
        body["logEntries"] = std::move(structured);
    }
    return json_response(200, body);
}

}  // namespace

asio::awaitable<bool> handle_log_routes(std::shared_ptr<server_state> st, http_request const& req, response_sink& sink)
{
    std::string_view path(req.path);
    bool const v2 = path.starts_with("/v2/");
    if (v2) path.remove_prefix(3);
    auto id = sandbox_route_id(path, "/logs");
    if (!id) co_return false;
    http_response r =
        req.method == "GET" ? logs_answer(*st, *id, req.query, v2) : rest_error(405, "method not allowed");
    co_await sink.send(std::move(r));
    co_return true;
}

}  // namespace prism_e2b::local::detail
