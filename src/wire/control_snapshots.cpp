// Snapshots of client_impl (e2b/snapshots.hpp): POST /sandboxes/{id}/snapshots,
// GET /snapshots (one page, X-Next-Token), DELETE /templates/{id}, and fork
// (POST /sandboxes/{id}/fork: sandboxes from one snapshot).
#include "core/spawn_op.hpp"
#include "wire/client_impl.hpp"
#include "wire/error_map.hpp"
#include "wire/rest_json.hpp"

#include <boost/json.hpp>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::wire {
namespace {

result<e2b::snapshot_info> to_snapshot(json::value const& v)
{
    auto const* o = v.if_object();
    auto const* id = o ? o->if_contains("snapshotID") : nullptr;
    if (!id || !id->is_string()) return error(errc::protocol_error, "snapshot: snapshotID is missing or not a string");
    e2b::snapshot_info out;
    out.snapshot_id = std::string(id->get_string());
    if (auto const* names = o->if_contains("names"); names && !names->is_null()) {
        if (!names->is_array()) return error(errc::protocol_error, "snapshot: names is not an array");
        for (auto const& n : names->get_array()) {
            if (!n.is_string()) return error(errc::protocol_error, "snapshot: a name is not a string");
            out.names.emplace_back(n.get_string());
        }
    }
    return out;
}

}  // namespace

asio::awaitable<result<e2b::snapshot_info>> client_impl::create_snapshot(std::string sandbox_id,
                                                                         e2b::create_snapshot_params params)
{
    json::object body;
    if (params.name) body["name"] = *params.name;
    std::string target = "/sandboxes/" + rest::encode_uri_component(sandbox_id) + "/snapshots";
    std::optional<std::string> text = json::serialize(body);
    auto r = co_await api_call("POST", std::move(target), std::move(text), false);
    if (!r) co_return r.error();
    if (!http_success(r->status)) co_return rest_error("create snapshot of " + sandbox_id, r->status, r->body);
    boost::system::error_code ec;
    auto v = json::parse(r->body, ec);
    if (ec) co_return error(errc::protocol_error, "create snapshot: invalid JSON", {"create snapshot", r->status, {}});
    auto s = to_snapshot(v);
    if (!s) co_return error(s.error().code(), s.error().message(), {"create snapshot", r->status, {}});
    co_return s;
}

asio::awaitable<result<e2b::snapshot_page>> client_impl::list_snapshots(e2b::snapshot_list_params params)
{
    std::string target = "/snapshots";
    auto add = [&](char const* name, std::string const& value) { rest::append_query(target, name, value); };
    if (params.sandbox_id) add("sandboxID", *params.sandbox_id);
    if (params.name) add("name", *params.name);
    if (params.limit) add("limit", std::to_string(*params.limit));
    if (params.next_token) add("nextToken", *params.next_token);
    auto r = co_await api_call("GET", std::move(target), std::nullopt, true);
    if (!r) co_return r.error();
    if (!http_success(r->status)) co_return rest_error("list snapshots", r->status, r->body);
    boost::system::error_code ec;
    auto v = json::parse(r->body, ec);
    if (ec || !v.is_array())
        co_return error(errc::protocol_error, "list snapshots: expected a JSON array",
                        {"list snapshots", r->status, {}});
    e2b::snapshot_page page;
    for (auto const& item : v.get_array()) {
        auto s = to_snapshot(item);
        if (!s) co_return error(s.error().code(), s.error().message(), {"list snapshots", r->status, {}});
        page.snapshots.push_back(std::move(*s));
    }
    if (auto const* t = r->header("x-next-token"); t && !t->empty()) page.next_token = *t;
    co_return page;
}

asio::awaitable<result<bool>> client_impl::delete_snapshot(std::string snapshot_id)
{
    std::string target = "/templates/" + rest::encode_uri_component(snapshot_id);
    auto r = co_await api_call("DELETE", std::move(target), std::nullopt, false);
    if (!r) co_return r.error();
    if (http_success(r->status)) co_return true;
    if (effective_rest_status(r->status, parse_rest_error_body(r->body)) == 404) co_return false;
    co_return rest_error("delete snapshot " + snapshot_id, r->status, r->body);
}

asio::awaitable<result<std::vector<result<e2b::sandbox_handle>>>> client_impl::fork_sandbox(std::string sandbox_id,
                                                                                            e2b::fork_params params)
{
    json::object body;
    if (params.count) body["count"] = *params.count;
    if (params.timeout) body["timeout"] = params.timeout->count();
    std::string target = "/sandboxes/" + rest::encode_uri_component(sandbox_id) + "/fork";
    std::optional<std::string> text = json::serialize(body);
    // Not idempotent: a retried fork would start its sandboxes twice.
    auto r = co_await api_call("POST", std::move(target), std::move(text), false);
    if (!r) co_return r.error();
    std::string const op = "fork sandbox " + sandbox_id;
    if (!http_success(r->status)) co_return rest_error(op, r->status, r->body);
    boost::system::error_code ec;
    auto v = json::parse(r->body, ec);
    if (ec || !v.is_array()) co_return error(errc::protocol_error, op + ": expected a JSON array", {op, r->status, {}});
    std::vector<result<e2b::sandbox_handle>> out;
    for (auto const& item : v.get_array()) {
        // SandboxForkResult: exactly one of sandbox and error.
        auto const* o = item.if_object();
        auto const* sb = o ? o->if_contains("sandbox") : nullptr;
        auto const* er = o ? o->if_contains("error") : nullptr;
        if (sb && sb->is_object())
            out.push_back(rest::parse_sandbox(json::serialize(*sb)));
        else if (er && er->is_object() && er->as_object().contains("code") && er->as_object().at("code").is_int64())
            out.push_back(
                rest_error(op, static_cast<int>(er->as_object().at("code").as_int64()), json::serialize(*er)));
        else
            co_return error(errc::protocol_error, op + ": a result has neither a sandbox nor an error",
                            {op, r->status, {}});
    }
    co_return out;
}

void client_impl::do_fork_sandbox(std::string sandbox_id, e2b::fork_params params,
                                  completion_handler<std::vector<result<e2b::sandbox_handle>>> h)
{
    detail::spawn_op(get_executor(), fork_sandbox(std::move(sandbox_id), params), std::move(h));
}

void client_impl::do_create_snapshot(std::string sandbox_id, e2b::create_snapshot_params params,
                                     completion_handler<e2b::snapshot_info> h)
{
    detail::spawn_op(get_executor(), create_snapshot(std::move(sandbox_id), std::move(params)), std::move(h));
}

void client_impl::do_list_snapshots(e2b::snapshot_list_params params, completion_handler<e2b::snapshot_page> h)
{
    detail::spawn_op(get_executor(), list_snapshots(std::move(params)), std::move(h));
}

void client_impl::do_delete_snapshot(std::string snapshot_id, completion_handler<bool> h)
{
    detail::spawn_op(get_executor(), delete_snapshot(std::move(snapshot_id)), std::move(h));
}

}  // namespace prism_e2b::wire
