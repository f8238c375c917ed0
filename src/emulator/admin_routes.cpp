// Fault-injection admin routes (documented in docs/local-server.md),
// guarded by X-Admin-Token; disabled when no admin token was configured.
#include "emulator/envd_agent.hpp"
#include "emulator/server_state.hpp"

#include <boost/json.hpp>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

std::int64_t int_field(json::object const& o, std::string_view k, std::int64_t dflt)
{
    auto it = o.find(k);
    if (it == o.end()) return dflt;
    if (it->value().is_int64()) return it->value().as_int64();
    if (it->value().is_uint64())
        return static_cast<std::int64_t>(std::min<std::uint64_t>(it->value().as_uint64(), INT64_MAX));
    return dflt;
}

/// GET /admin/memory-tiers: where memory-paused sandboxes' memory is, and the policy between
/// RAM and disk (docs/local-server.md).
http_response memory_tiers_reply(server_state const& st)
{
    auto const report = st.engine->memory_tiers();
    if (!report) return rest_error(404, "the " + std::string(st.engine->name()) + " engine keeps no memory tiers");
    json::object policy;
    if (report->policy.sync)
        policy["imageWritten"] = "before the pause answers";
    else if (report->policy.image_after)
        policy["imageAfterSeconds"] = report->policy.image_after->count();
    else
        policy["imageWritten"] = "under memory pressure";
    policy["frozenMemoryCapMiB"] = report->policy.frozen_memory_cap_mb;
    json::object o;
    o["policy"] = std::move(policy);
    auto const& c = report->counts;
    o["frozenSandboxes"] = c.frozen;
    o["frozenMemoryBytes"] = c.frozen_bytes;
    o["imagesWritten"] = c.written;
    o["imagesWrittenUnderCap"] = c.written_under_cap;
    o["imageWriteFailures"] = c.failed;
    o["lastImageWriteMs"] = c.last_write.count();
    return json_response(200, o);
}

}  // namespace

asio::awaitable<void> handle_admin(std::shared_ptr<server_state> st, http_request req, response_sink& sink)
{
    // Disabled routes and X-Admin-Token were judged by dispatch's refusal() (local_server.cpp).
    std::string_view path(req.path);
    if (req.method == "GET" && path.rfind("/admin/sandboxes/", 0) == 0 && path.size() > 17 &&
        path.substr(path.size() - 11) == "/peak-execs") {
        std::string id(path.substr(17, path.size() - 17 - 11));
        auto sb = st->find(id);
        if (!sb) {
            co_await sink.send(rest_error(404, "sandbox not found"));
            co_return;
        }
        if (sb->agent) {  // namespaces engine: the sandbox's agent runs and counts its processes
            http_request stats;
            stats.method = "GET";
            stats.target = stats.path = agent_stats_path;
            co_await forward_to_agent(st, sb, std::move(stats), sink);
            co_return;
        }
        co_await sink.send(exec_counts(*sb));
        co_return;
    }
    if (req.method == "GET" && path == "/admin/memory-tiers") {
        co_await sink.send(memory_tiers_reply(*st));
        co_return;
    }
    if (req.method != "POST" || path.rfind("/admin/faults/", 0) != 0) {
        co_await sink.send(rest_error(404, "no such admin route"));
        co_return;
    }
    json::object o;
    if (!req.body.empty()) {
        boost::system::error_code ec;
        auto v = json::parse(req.body, ec);
        if (ec || !v.is_object()) {
            co_await sink.send(rest_error(400, "body must be a JSON object"));
            co_return;
        }
        o = std::move(v.as_object());
    }
    auto const what = path.substr(14);
    auto& f = st->faults;
    if (what == "pause-busy") {
        f.fail_next_pauses(static_cast<unsigned>(std::max<std::int64_t>(0, int_field(o, "count", 1))));
    } else if (what == "create-throttle") {
        f.throttle_next_creates(static_cast<unsigned>(std::max<std::int64_t>(0, int_field(o, "count", 1))),
                                std::chrono::seconds(std::max<std::int64_t>(0, int_field(o, "retryAfter", 1))));
    } else if (what == "latency") {
        std::string route;
        if (auto it = o.find("route"); it != o.end() && it->value().is_string())
            route = std::string(it->value().as_string());
        f.add_latency(route, std::chrono::milliseconds(std::max<std::int64_t>(0, int_field(o, "ms", 0))));
    } else if (what == "cut-stream") {
        f.cut_next_streams(static_cast<std::size_t>(std::max<std::int64_t>(0, int_field(o, "afterBytes", 0))),
                           static_cast<unsigned>(std::max<std::int64_t>(0, int_field(o, "count", 1))));
    } else if (what == "kill-during-exec") {
        std::string id;
        if (auto it = o.find("sandboxID"); it != o.end() && it->value().is_string())
            id = std::string(it->value().as_string());
        auto sb = st->find(id);
        if (!sb) {
            co_await sink.send(rest_error(404, "sandbox not found"));
            co_return;
        }
        auto const after = std::chrono::milliseconds(std::max<std::int64_t>(0, int_field(o, "afterMs", 0)));
        bool running = false;
        if (sb->agent) {  // namespaces, gvisor engines: the sandbox's agent runs and counts its processes
            if (after.count() == 0) running = agent_running(*sb) > 0;
        } else {
            std::lock_guard lk(sb->mutex);
            running = sb->running > 0;
        }
        if (running && after.count() == 0)
            st->kill_sandbox(sb);
        else
            f.kill_sandbox_during_exec(id, after);
    } else if (what == "reset") {
        f.reset();
    } else {
        co_await sink.send(rest_error(404, "no such fault"));
        co_return;
    }
    co_await sink.send(no_content());
}

}  // namespace prism_e2b::local::detail
