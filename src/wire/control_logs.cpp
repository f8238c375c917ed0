// client_impl's GET /v2/sandboxes/{id}/logs (e2b/sandbox_logs.hpp) and
// PUT /sandboxes/{id}/network (e2b/network.hpp; 501 is errc::unsupported).
#include "core/spawn_op.hpp"
#include "wire/client_impl.hpp"
#include "wire/error_map.hpp"
#include "wire/rest_json.hpp"

#include <boost/json.hpp>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::wire {
namespace {

std::string sandbox_path(std::string const& id) { return "/sandboxes/" + rest::encode_uri_component(id); }

result<std::vector<e2b::sandbox_log_entry>> parse_logs(std::string_view body)
{
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    auto const* o = ec ? nullptr : v.if_object();
    auto const* logs = o ? o->if_contains("logs") : nullptr;
    if (!logs || !logs->is_array()) return error(errc::protocol_error, "sandbox logs: expected {\"logs\":[...]}");
    std::vector<e2b::sandbox_log_entry> out;
    for (auto const& item : logs->get_array()) {
        auto const* e = item.if_object();
        if (!e) return error(errc::protocol_error, "sandbox logs: an entry is not an object");
        e2b::sandbox_log_entry entry;
        for (auto [name, field] : {std::pair{"timestamp", &entry.timestamp}, std::pair{"level", &entry.level},
                                   std::pair{"message", &entry.message}}) {
            auto const* f = e->if_contains(name);
            if (!f || !f->is_string())
                return error(errc::protocol_error,
                             std::string("sandbox logs: ") + name + " is missing or not a string");
            *field = std::string(f->get_string());
        }
        if (auto const* fields = e->if_contains("fields"); fields && fields->is_object())
            for (auto const& [k, fv] : fields->get_object())
                if (fv.is_string()) entry.fields.emplace(std::string(k), std::string(fv.get_string()));
        out.push_back(std::move(entry));
    }
    return out;
}

}  // namespace

asio::awaitable<result<std::vector<e2b::sandbox_log_entry>>> client_impl::get_sandbox_logs(std::string sandbox_id,
                                                                                           e2b::logs_params params)
{
    std::string target = "/v2" + sandbox_path(sandbox_id) + "/logs";
    auto add = [&](char const* name, std::string const& value) { rest::append_query(target, name, value); };
    if (params.cursor) add("cursor", std::to_string(*params.cursor));
    if (params.limit) add("limit", std::to_string(*params.limit));
    if (params.backward) add("direction", "backward");
    if (params.level) add("level", *params.level);
    if (params.search) add("search", *params.search);
    auto r = co_await api_call("GET", std::move(target), std::nullopt, true);
    if (!r) co_return r.error();
    if (r->status < 200 || r->status >= 300) co_return rest_error("sandbox logs " + sandbox_id, r->status, r->body);
    auto logs = parse_logs(r->body);
    if (!logs) co_return error(logs.error().code(), logs.error().message(), {"sandbox logs", r->status, {}});
    co_return logs;
}

asio::awaitable<result<void>> client_impl::update_network(std::string sandbox_id, e2b::network_update update)
{
    json::object body;
    auto list = [](std::vector<std::string> const& v) {
        json::array a;
        for (auto const& s : v) a.emplace_back(s);
        return a;
    };
    if (!update.allow_out.empty()) body["allowOut"] = list(update.allow_out);
    if (!update.deny_out.empty()) body["denyOut"] = list(update.deny_out);
    if (update.allow_internet_access) body["allow_internet_access"] = *update.allow_internet_access;
    std::optional<std::string> text = json::serialize(body);
    auto r = co_await api_call("PUT", sandbox_path(sandbox_id) + "/network", std::move(text), false);
    if (!r) co_return r.error();
    if (r->status >= 200 && r->status < 300) co_return result<void>{};
    if (r->status == 501)
        co_return error(errc::unsupported,
                        "the server cannot change a sandbox's network: " + parse_rest_error_body(r->body).message,
                        {"update network", r->status, {}});
    co_return rest_error("update network of " + sandbox_id, r->status, r->body);
}

void client_impl::do_get_sandbox_logs(std::string sandbox_id, e2b::logs_params params,
                                      completion_handler<std::vector<e2b::sandbox_log_entry>> h)
{
    detail::spawn_op(get_executor(), get_sandbox_logs(std::move(sandbox_id), std::move(params)), std::move(h));
}

void client_impl::do_update_network(std::string sandbox_id, e2b::network_update update, completion_handler<void> h)
{
    detail::spawn_op(get_executor(), update_network(std::move(sandbox_id), std::move(update)), std::move(h));
}

}  // namespace prism_e2b::wire
