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
    http_request req;
    req.method = std::move(method);
    req.target = std::move(target);
    req.headers = {{"X-API-KEY", opts_.api_key}, {"User-Agent", opts_.raw.user_agent}, {"Accept", "application/json"}};
    if (body) {
        req.headers.emplace_back("Content-Type", "application/json");
        req.body = std::move(*body);
    }
    auto const c = call(idempotent);
    co_return co_await stub_->request(api_, std::move(req), c);
}

namespace {

bool ok(int status) { return status >= 200 && status < 300; }

std::string id_path(std::string const& id) { return "/sandboxes/" + rest::encode_uri_component(id); }

}  // namespace

asio::awaitable<result<e2b::sandbox_handle>> client_impl::create_sandbox(e2b::create_sandbox_params params)
{
    auto r = co_await api_call("POST", "/sandboxes", rest::create_body(params), false);
    if (!r) co_return r.error();
    if (!ok(r->status)) co_return rest_error("create sandbox", r->status, r->body);
    auto h = rest::parse_sandbox(r->body);
    if (!h) co_return error(h.error().code(), h.error().message(), {"create sandbox", r->status, {}});
    co_return h;
}

asio::awaitable<result<e2b::connect_result>> client_impl::connect_sandbox(std::string sandbox_id,
                                                                          std::chrono::seconds timeout)
{
    // The body is required and carries the caller's timeout: omitting it
    // shrinks the sandbox's life to the default (wire-notes.md pitfall).
    auto r = co_await api_call("POST", id_path(sandbox_id) + "/connect", rest::timeout_body(timeout), false);
    if (!r) co_return r.error();
    if (!ok(r->status)) co_return rest_error("connect sandbox " + sandbox_id, r->status, r->body);
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
    if (ok(r->status)) {
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
    if (ok(r->status)) {
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
    if (!ok(r->status)) co_return rest_error("get sandbox " + sandbox_id, r->status, r->body);
    auto i = rest::parse_sandbox_detail(r->body);
    if (!i) co_return error(i.error().code(), i.error().message(), {"get sandbox", r->status, {}});
    co_return i;
}

asio::awaitable<result<e2b::sandbox_page>> client_impl::list_sandboxes(e2b::list_params params)
{
    auto r = co_await api_call("GET", rest::list_target(params), std::nullopt, true);
    if (!r) co_return r.error();
    if (!ok(r->status)) co_return rest_error("list sandboxes", r->status, r->body);
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
    if (!ok(r->status)) co_return rest_error("set timeout of sandbox " + sandbox_id, r->status, r->body);
    co_return result<void>{};
}

}  // namespace prism_e2b::wire
