// Control-plane calls of client_impl (REST, wire-notes.md "Control plane calls").
#include <prism_e2b/redactor.hpp>

#include "wire/client_impl.hpp"
#include "wire/error_map.hpp"
#include "wire/rest_json.hpp"
#include "wire/retry.hpp"

namespace asio = boost::asio;

namespace prism_e2b::wire {

client_impl::client_impl(asio::any_io_executor ex, e2b::resolved_client_options opts,
                         std::shared_ptr<exchange> transport, origin api, std::optional<origin> sandbox)
    : coroutine_client(std::move(ex)),
      opts_(std::move(opts)),
      transport_(std::move(transport)),
      stub_(make_retrying(transport_)),
      api_(std::move(api)),
      sandbox_(std::move(sandbox)),
      envd_slots_(async_semaphore::create(std::max<std::size_t>(1, opts_.raw.max_inflight_envd_requests))),
      opening_slots_(opts_.raw.max_opening_streams ? async_semaphore::create(opts_.raw.max_opening_streams) : nullptr)
{
}

call_options client_impl::call(bool idempotent, std::size_t max_reply) const
{
    call_options c;
    c.attempt_timeout = opts_.raw.request_timeout;
    if (opts_.raw.call_timeout.count() > 0) c.deadline = call_options::clock::now() + opts_.raw.call_timeout;
    c.max_response_bytes = max_reply;
    c.retry.max_retries = opts_.raw.max_retries;
    c.retry.base_delay = opts_.raw.retry_base_delay;
    c.retry.idempotent = idempotent;
    if (opts_.raw.request_timeout.count() > 0) c.retry.max_retry_after = opts_.raw.request_timeout;
    return c;
}

asio::awaitable<result<http_response>> client_impl::api_call(std::string method, std::string target,
                                                             std::optional<std::string> body, bool idempotent)
{
    header_list auth{{"X-API-KEY", opts_.api_key}};
    co_return co_await origin_call(std::move(method), std::move(target), std::move(auth), std::move(body),
                                   "application/json", idempotent);
}

asio::awaitable<result<http_response>> client_impl::origin_call(std::string method, std::string target,
                                                                header_list auth, std::optional<std::string> body,
                                                                std::string content_type, bool idempotent)
{
    http_request req;
    req.method = std::move(method);
    req.target = std::move(target);
    req.headers = std::move(auth);
    req.headers.emplace_back("User-Agent", opts_.raw.user_agent);
    req.headers.emplace_back("Accept", "application/json");
    if (body) {
        req.headers.emplace_back("Content-Type", std::move(content_type));
        req.body = std::move(*body);
    }
    auto const c = call(idempotent);
    co_return co_await stub_->request(api_, std::move(req), c);
}

namespace {

std::string id_path(std::string const& id) { return "/sandboxes/" + rest::encode_uri_component(id); }

}  // namespace

asio::awaitable<result<http_response>> client_impl::api_call_v2_or_v1(std::string v2_target, std::string v2_body,
                                                                      std::string v1_target, std::string v1_body,
                                                                      std::atomic<bool>& v1_only)
{
    if (!v2_target.empty() && !v1_only.load(std::memory_order_relaxed)) {
        auto r = co_await api_call("POST", std::move(v2_target), std::move(v2_body), false);
        // A 404 may also be the server's answer about the template or sandbox: v1 then answers it
        // again, and only a v1 success marks the server as one without v2.
        if (!r || (r->status != 404 && r->status != 405)) co_return r;
        auto v1 = co_await api_call("POST", std::move(v1_target), std::move(v1_body), false);
        if (v1 && http_success(v1->status)) v1_only.store(true, std::memory_order_relaxed);
        co_return v1;
    }
    co_return co_await api_call("POST", std::move(v1_target), std::move(v1_body), false);
}

asio::awaitable<result<e2b::sandbox_handle>> client_impl::create_sandbox(e2b::create_sandbox_params params)
{
    // As e2b@2.51: POST /v2/sandboxes. v2 has no `secure` (its sandboxes always want an access
    // token), so a sandbox without one is asked of v1.
    // Arguments named first, no ?: around co_await: g++ 12 destroys such temporaries twice.
    std::string v1_body = rest::create_body(params);
    std::string v2_body = params.secure ? rest::create_body(params, rest::create_api::v2) : std::string();
    std::string v2_target = params.secure ? "/v2/sandboxes" : "";
    auto r = co_await api_call_v2_or_v1(std::move(v2_target), std::move(v2_body), "/sandboxes", std::move(v1_body),
                                        v1_create_);
    if (!r) co_return r.error();
    if (!http_success(r->status)) co_return rest_error("create sandbox", r->status, r->body);
    auto h = rest::parse_sandbox(r->body);
    if (!h) co_return error(h.error().code(), h.error().message(), {"create sandbox", r->status, {}});
    co_return h;
}

asio::awaitable<result<e2b::connect_result>> client_impl::connect_sandbox(std::string sandbox_id,
                                                                          std::chrono::seconds timeout)
{
    // The body is required and carries the caller's timeout: omitting it
    // shrinks the sandbox's life to the default (wire-notes.md pitfall).
    std::string v2_target = "/v2" + id_path(sandbox_id) + "/connect";
    std::string v1_target = id_path(sandbox_id) + "/connect";
    std::string body = rest::timeout_body(timeout);
    auto r = co_await api_call_v2_or_v1(std::move(v2_target), body, std::move(v1_target), body, v1_connect_);
    if (!r) co_return r.error();
    if (!http_success(r->status)) co_return rest_error("connect sandbox " + sandbox_id, r->status, r->body);
    auto h = rest::parse_sandbox(r->body);
    if (!h) co_return error(h.error().code(), h.error().message(), {"connect sandbox", r->status, {}});
    e2b::connect_result out;
    out.outcome = r->status == 201 ? e2b::connect_result::kind::resumed : e2b::connect_result::kind::already_running;
    out.sandbox = std::move(*h);
    co_return out;
}

asio::awaitable<result<e2b::pause_reply>> client_impl::pause_sandbox(std::string sandbox_id, bool memory)
{
    auto r = co_await api_call("POST", id_path(sandbox_id) + "/pause", rest::pause_body(memory), false);
    if (!r) co_return r.error();
    e2b::pause_reply out;
    out.http_status = r->status;
    if (http_success(r->status)) {
        out.outcome = e2b::pause_reply::kind::paused;
        co_return out;
    }
    auto body = parse_rest_error_body(r->body);
    out.message = secret_redactor::global().redact(body.message);
    switch (effective_rest_status(r->status, body)) {
        case 409:
            out.outcome = e2b::pause_reply::kind::already_paused;
            co_return out;
        case 404:
            out.outcome = e2b::pause_reply::kind::not_found;
            co_return out;
        case 503:
            out.outcome = e2b::pause_reply::kind::busy;
            co_return out;
        default:
            co_return rest_error("pause sandbox " + sandbox_id, r->status, r->body);
    }
}

asio::awaitable<result<bool>> client_impl::kill_sandbox(std::string sandbox_id)
{
    auto r = co_await api_call("DELETE", id_path(sandbox_id), std::nullopt, false);
    if (!r) co_return r.error();
    // Gone either way: its access token is no longer a live secret of this client.
    if (http_success(r->status)) {
        secret_redactor::global().release(sandbox_id);
        co_return true;
    }
    if (effective_rest_status(r->status, parse_rest_error_body(r->body)) == 404) {
        secret_redactor::global().release(sandbox_id);
        co_return false;
    }
    co_return rest_error("kill sandbox " + sandbox_id, r->status, r->body);
}

asio::awaitable<result<e2b::sandbox_info>> client_impl::get_sandbox_info(std::string sandbox_id)
{
    auto r = co_await api_call("GET", id_path(sandbox_id), std::nullopt, true);
    if (!r) co_return r.error();
    if (!http_success(r->status)) co_return rest_error("get sandbox " + sandbox_id, r->status, r->body);
    auto i = rest::parse_sandbox_detail(r->body);
    if (!i) co_return error(i.error().code(), i.error().message(), {"get sandbox", r->status, {}});
    co_return i;
}

asio::awaitable<result<e2b::sandbox_page>> client_impl::list_sandboxes(e2b::list_params params)
{
    auto r = co_await api_call("GET", rest::list_target(params), std::nullopt, true);
    if (!r) co_return r.error();
    if (!http_success(r->status)) co_return rest_error("list sandboxes", r->status, r->body);
    auto l = rest::parse_sandbox_list(r->body);
    if (!l) co_return error(l.error().code(), l.error().message(), {"list sandboxes", r->status, {}});
    e2b::sandbox_page page;
    page.sandboxes = std::move(*l);
    if (auto const* t = r->header("x-next-token"); t && !t->empty()) page.next_token = *t;
    co_return page;
}

asio::awaitable<result<void>> client_impl::set_sandbox_timeout(std::string sandbox_id, std::chrono::seconds timeout)
{
    auto r = co_await api_call("POST", id_path(sandbox_id) + "/timeout", rest::timeout_body(timeout), false);
    if (!r) co_return r.error();
    if (!http_success(r->status)) co_return rest_error("set timeout of sandbox " + sandbox_id, r->status, r->body);
    co_return result<void>{};
}

}  // namespace prism_e2b::wire
