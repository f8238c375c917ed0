// GET /sandboxes/{id}/metrics (e2b/metrics.hpp): the query, the SandboxMetric
// array parsed strictly (a field of the wrong type is a protocol error, never
// a silent 0).
#include "core/spawn_op.hpp"
#include "wire/client_impl.hpp"
#include "wire/error_map.hpp"
#include "wire/rest_json.hpp"

#include <boost/json.hpp>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::wire {
namespace {

/// An integer field; absent is 0 (protobuf-style defaults), anything else not an integer is an error.
bool integer_field(json::object const& o, char const* name, std::int64_t& out)
{
    auto const* v = o.if_contains(name);
    if (!v || v->is_null()) return true;
    if (v->is_int64())
        out = v->as_int64();
    else if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        out = static_cast<std::int64_t>(v->as_uint64());
    else if (v->is_double() && v->as_double() == static_cast<double>(static_cast<std::int64_t>(v->as_double())))
        out = static_cast<std::int64_t>(v->as_double());
    else
        return false;
    return true;
}

result<std::vector<e2b::sandbox_metric>> parse_metrics(std::string_view body)
{
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec || !v.is_array()) return error(errc::protocol_error, "metrics: expected a JSON array");
    std::vector<e2b::sandbox_metric> out;
    for (auto const& item : v.as_array()) {
        if (!item.is_object()) return error(errc::protocol_error, "metrics: an entry is not an object");
        auto const& o = item.as_object();
        e2b::sandbox_metric m;
        std::int64_t cpus = 0;
        bool ok = integer_field(o, "timestampUnix", m.timestamp_unix) && integer_field(o, "cpuCount", cpus) &&
                  integer_field(o, "memUsed", m.mem_used) && integer_field(o, "memTotal", m.mem_total) &&
                  integer_field(o, "memCache", m.mem_cache) && integer_field(o, "diskUsed", m.disk_used) &&
                  integer_field(o, "diskTotal", m.disk_total);
        if (auto const* pct = o.if_contains("cpuUsedPct"); pct && !pct->is_null()) {
            if (pct->is_number())
                m.cpu_used_pct = pct->to_number<double>();
            else
                ok = false;
        }
        if (!ok || cpus < 0 || cpus > INT32_MAX)
            return error(errc::protocol_error, "metrics: a field has the wrong type");
        m.cpu_count = static_cast<std::int32_t>(cpus);
        out.push_back(m);
    }
    return out;
}

}  // namespace

asio::awaitable<result<std::vector<e2b::sandbox_metric>>> client_impl::get_sandbox_metrics(std::string sandbox_id,
                                                                                           e2b::metrics_params params)
{
    std::string target = "/sandboxes/" + rest::encode_uri_component(sandbox_id) + "/metrics";
    char sep = '?';
    for (auto const& [name, value] : {std::pair{"start", params.start}, std::pair{"end", params.end}}) {
        if (!value) continue;
        target += sep + std::string(name) + "=" + std::to_string(*value);
        sep = '&';
    }
    std::string method = "GET";
    auto r = co_await api_call(std::move(method), std::move(target), std::nullopt, true);
    if (!r) co_return r.error();
    if (r->status < 200 || r->status >= 300) co_return rest_error("sandbox metrics " + sandbox_id, r->status, r->body);
    auto m = parse_metrics(r->body);
    if (!m) co_return error(m.error().code(), m.error().message(), {"sandbox metrics", r->status, {}});
    co_return m;
}

void client_impl::do_get_sandbox_metrics(std::string sandbox_id, e2b::metrics_params params,
                                         completion_handler<std::vector<e2b::sandbox_metric>> h)
{
    prism_e2b::detail::spawn_op(get_executor(), get_sandbox_metrics(std::move(sandbox_id), params), std::move(h));
}

}  // namespace prism_e2b::wire
