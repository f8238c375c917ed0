// envd calls of client_impl: Connect unary RPCs of process.Process and
// filesystem.Filesystem, the process streams' opening, /files and /health.
#include <prism_e2b/redactor.hpp>

#include "protocol/base64.hpp"
#include "protocol/envelope.hpp"
#include "wire/client_impl.hpp"
#include "wire/error_map.hpp"
#include "wire/gzip_encoder.hpp"
#include "wire/multipart_body.hpp"
#include "wire/protojson.hpp"
#include "wire/rest_json.hpp"

#include <algorithm>

namespace asio = boost::asio;

namespace prism_e2b::wire {

int compare_versions(std::string_view a, std::string_view b) noexcept
{
    auto next = [](std::string_view& s) {
        long n = 0;
        while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
            n = n * 10 + (s.front() - '0');
            s.remove_prefix(1);
        }
        while (!s.empty() && s.front() != '.') s.remove_prefix(1);  // pre-release suffixes are ignored
        if (!s.empty()) s.remove_prefix(1);
        return n;
    };
    if (!a.empty() && a.front() == 'v') a.remove_prefix(1);
    if (!b.empty() && b.front() == 'v') b.remove_prefix(1);
    for (int i = 0; i < 3; ++i) {
        long x = next(a), y = next(b);
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

result<origin> client_impl::envd_origin(e2b::envd_target const& t) const
{
    if (t.sandbox_id.empty()) return error(errc::invalid_argument, "envd target without a sandbox id");
    // The id becomes part of a host name and a header: letters, digits, '-' and '_' only.
    if (!std::all_of(t.sandbox_id.begin(), t.sandbox_id.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        }))
        return error(errc::invalid_argument, "invalid sandbox id '" + t.sandbox_id + "'");
    if (t.access_token) secret_redactor::global().add(*t.access_token, t.sandbox_id);
    if (sandbox_) return *sandbox_;
    auto const& domain = t.domain && !t.domain->empty() ? *t.domain : opts_.domain;
    // E2B's own domains serve every sandbox's envd from one origin, routed by the
    // E2b-Sandbox-Id header (wire-notes.md; the official SDK's supportedDomains),
    // so one keep-alive pool serves all sandboxes. Other domains: per-sandbox host.
    static constexpr std::string_view shared_origin_domains[] = {"e2b.app", "e2b.dev", "e2b.pro", "e2b-staging.dev"};
    if (std::find(std::begin(shared_origin_domains), std::end(shared_origin_domains), domain) !=
        std::end(shared_origin_domains))
        return parse_origin("https://sandbox." + domain);
    return parse_origin("https://" + std::string(envd_port) + "-" + t.sandbox_id + "." + domain);
}

header_list client_impl::envd_headers(e2b::envd_target const& t, std::optional<std::string> const& user) const
{
    header_list h{{"User-Agent", opts_.raw.user_agent},
                  {"E2b-Sandbox-Id", t.sandbox_id},
                  {"E2b-Sandbox-Port", std::string(envd_port)}};
    if (t.access_token && !t.access_token->empty()) h.emplace_back("X-Access-Token", *t.access_token);
    if (user && !user->empty()) h.emplace_back("Authorization", "Basic " + detail::base64_encode(*user + ":"));
    return h;
}

asio::awaitable<result<http_response>> client_impl::envd_http(e2b::envd_target target, http_request req, call_options c)
{
    auto o = envd_origin(target);
    if (!o) co_return o.error();
    // The client-wide in-flight cap: wait in line, never fail.
    auto slot = co_await envd_slots_->acquire();
    if (!slot) co_return slot.error();
    co_return co_await stub_->request(std::move(*o), std::move(req), c);
}

asio::awaitable<result<std::string>> client_impl::envd_unary(std::string rpc, e2b::envd_target target, std::string body,
                                                             bool idempotent)
{
    http_request req;
    req.method = "POST";
    req.target = "/" + rpc;
    req.headers = envd_headers(target, std::nullopt);
    req.headers.emplace_back("Connect-Protocol-Version", "1");
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = std::move(body);
    auto r = co_await envd_http(target, std::move(req), call(idempotent));
    if (!r)
        co_return error(r.error().code(), r.error().message(), {rpc, r.error().http_status(), r.error().vendor_code()});
    if (r->status != 200) co_return connect_unary_error(rpc, r->status, r->body);
    co_return std::move(r->body);
}

// ---- process.Process ---------------------------------------------------------

asio::awaitable<result<client_impl::open_stream_result>> client_impl::open_connect_stream(
    std::string rpc, e2b::envd_target target, std::string body, std::chrono::milliseconds deadline,
    std::optional<std::string> user)
{
    auto o = envd_origin(target);
    if (!o) co_return o.error();
    http_request req;
    req.method = "POST";
    req.target = "/" + rpc;
    req.headers = envd_headers(target, user);
    req.headers.emplace_back("Connect-Protocol-Version", "1");
    req.headers.emplace_back("Content-Type", "application/connect+json");
    if (deadline.count() > 0) req.headers.emplace_back("Connect-Timeout-Ms", std::to_string(deadline.count()));
    req.headers.emplace_back("Keepalive-Ping-Interval", std::to_string(stream_keepalive_interval.count()));
    req.body = encode_envelope(body);
    auto slot = co_await envd_slots_->acquire();
    if (!slot) co_return slot.error();
    // The retry decorator replays a stream request on 429 only: it is not idempotent.
    auto const c = call(false);
    auto opened = co_await stub_->open_stream(*o, std::move(req), c);
    if (!opened) co_return error(opened.error().code(), opened.error().message(), {rpc, 0, {}});
    auto s = std::move(*opened);
    if (s->status() != 200) {
        // An error before the stream started (a proxy, or routing): read the
        // small body and map it like a unary error.
        std::string err_body;
        while (!s->done() && err_body.size() < 65536) {
            auto piece = co_await s->read_some(opts_.raw.request_timeout);
            if (!piece) break;
            err_body += *piece;
        }
        co_return connect_unary_error(rpc, s->status(), err_body);
    }
    auto const* ct = find_header(s->headers(), "Content-Type");
    if (!ct || ct->rfind("application/connect+json", 0) != 0)
        co_return error(errc::protocol_error, "stream answered with content type '" + (ct ? *ct : std::string()) + "'",
                        {rpc, 200, {}});
    co_return open_stream_result{std::move(s), std::move(*slot)};
}

asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> client_impl::open_process_stream(
    std::string rpc, e2b::envd_target target, std::string body, std::chrono::milliseconds deadline,
    std::optional<std::string> user)
{
    auto opened = co_await open_connect_stream(rpc, std::move(target), std::move(body), deadline, std::move(user));
    if (!opened) co_return opened.error();
    co_return make_process_event_stream(get_executor(), std::move(opened->stream), std::move(opened->slot), rpc,
                                        opts_.raw.stream_idle_timeout);
}

asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> client_impl::start_process(
    e2b::envd_target target, e2b::start_process_params params)
{
    return when_opening<std::unique_ptr<e2b::process_event_stream>>(
        [this, target = std::move(target), params = std::move(params)]() mutable {
            return start_process_now(std::move(target), std::move(params));
        });
}

asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> client_impl::start_process_now(
    e2b::envd_target target, e2b::start_process_params params)
{
    auto body = protojson::start_request(params);
    co_return co_await open_process_stream("process.Process/Start", std::move(target), std::move(body), params.timeout,
                                           params.user);
}

asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> client_impl::connect_process(
    e2b::envd_target target, e2b::process_selector selector, std::chrono::milliseconds timeout)
{
    return when_opening<std::unique_ptr<e2b::process_event_stream>>(
        [this, target = std::move(target), selector = std::move(selector), timeout]() mutable {
            return connect_process_now(std::move(target), std::move(selector), timeout);
        });
}

asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> client_impl::connect_process_now(
    e2b::envd_target target, e2b::process_selector selector, std::chrono::milliseconds timeout)
{
    auto body = protojson::selector_request(selector);
    if (!body) co_return body.error();
    co_return co_await open_process_stream("process.Process/Connect", std::move(target), std::move(*body), timeout,
                                           std::nullopt);
}

asio::awaitable<result<std::vector<e2b::process_info>>> client_impl::list_processes(e2b::envd_target target)
{
    auto r = co_await envd_unary("process.Process/List", std::move(target), "{}", true);
    if (!r) co_return r.error();
    co_return protojson::parse_list_response(*r);
}

asio::awaitable<result<void>> client_impl::send_stdin(e2b::envd_target target, e2b::process_selector selector,
                                                      std::string bytes)
{
    auto body = protojson::send_input_request(selector, bytes);
    if (!body) co_return body.error();
    auto r = co_await envd_unary("process.Process/SendInput", std::move(target), std::move(*body), false);
    if (!r) co_return r.error();
    co_return result<void>{};
}

asio::awaitable<result<void>> client_impl::close_stdin(e2b::envd_target target, e2b::process_selector selector)
{
    if (!target.envd_version.empty() && compare_versions(target.envd_version, "0.5.2") < 0)
        co_return error(errc::unsupported, "envd " + target.envd_version + " cannot close stdin (needs 0.5.2)",
                        {"process.Process/CloseStdin", 0, {}});
    auto body = protojson::selector_request(selector);
    if (!body) co_return body.error();
    auto r = co_await envd_unary("process.Process/CloseStdin", std::move(target), std::move(*body), false);
    if (!r) co_return r.error();
    co_return result<void>{};
}

asio::awaitable<result<void>> client_impl::send_signal(e2b::envd_target target, e2b::process_selector selector,
                                                       process_signal sig)
{
    auto body = protojson::send_signal_request(selector, sig);
    if (!body) co_return body.error();
    auto r = co_await envd_unary("process.Process/SendSignal", std::move(target), std::move(*body), false);
    if (!r) co_return r.error();
    co_return result<void>{};
}

// ---- files and filesystem.Filesystem -----------------------------------------

error envd_http_error(std::string op, int status, std::string_view body)
{
    if (status == 502)
        return error(errc::not_found, "the sandbox is not running (envd answered 502)", {std::move(op), status, {}});
    if (status == 400)
        return error(errc::invalid_argument, parse_rest_error_body(body).message, {std::move(op), status, {}});
    if (status == 507)
        return error(errc::limit_exceeded, "not enough disk space in the sandbox", {std::move(op), status, {}});
    return rest_error(std::move(op), status, body);
}

asio::awaitable<result<std::string>> client_impl::read_file(e2b::envd_target target, std::string path)
{
    http_request req;
    req.method = "GET";
    req.target = "/files?path=" + rest::encode_uri_component(path);
    req.headers = envd_headers(target, std::nullopt);
    // Accept-Encoding: gzip is the transport's; the body arrives decoded, capped.
    auto r = co_await envd_http(target, std::move(req), call(true, opts_.raw.max_file_bytes));
    if (!r) co_return r.error();
    if (r->status != 200) co_return envd_http_error("read file", r->status, r->body);
    co_return std::move(r->body);
}

asio::awaitable<result<e2b::entry_info>> client_impl::write_file(e2b::envd_target target, std::string path,
                                                                 std::string data)
{
    http_request req;
    req.method = "POST";
    req.target = "/files?path=" + rest::encode_uri_component(path);
    req.headers = envd_headers(target, std::nullopt);
    // octet-stream needs envd >= 0.5.7; multipart works with every envd.
    if (!target.envd_version.empty() && compare_versions(target.envd_version, "0.5.7") >= 0) {
        req.headers.emplace_back("Content-Type", "application/octet-stream");
        req.body = std::move(data);
        if (opts_.raw.gzip_uploads) {
            auto packed = gzip_encode(req.body);
            if (!packed) co_return error(packed.error().code(), packed.error().message(), {"write file", 0, {}});
            req.body = std::move(*packed);
            req.headers.emplace_back("Content-Encoding", "gzip");
        }
    } else {
        std::string const boundary = multipart_boundary({data});
        req.headers.emplace_back("Content-Type", multipart_content_type(boundary));
        req.body = multipart_part_head(boundary, path) + data + multipart_tail(boundary);
    }
    auto r = co_await envd_http(target, std::move(req), call(false));
    if (!r) co_return r.error();
    co_return co_await uploaded_entry(std::move(target), std::move(*r));
}

asio::awaitable<result<e2b::entry_info>> client_impl::uploaded_entry(e2b::envd_target target, http_response reply)
{
    if (reply.status != 200) co_return envd_http_error("write file", reply.status, reply.body);
    auto entries = protojson::parse_upload_response(reply.body);
    if (!entries) co_return error(entries.error().code(), entries.error().message(), {"write file", reply.status, {}});
    if (entries->empty())
        co_return error(errc::protocol_error, "envd did not describe the written file",
                        {"write file", reply.status, {}});
    co_return co_await stat_or(std::move(target), std::move(entries->front()));
}

asio::awaitable<e2b::entry_info> client_impl::stat_or(e2b::envd_target target, e2b::entry_info uploaded)
{
    std::string path = uploaded.path;
    auto st = co_await stat(std::move(target), std::move(path));
    if (st) co_return std::move(*st);
    co_return uploaded;
}

std::string client_impl::files_target(std::string const& path, std::optional<std::string> const& user)
{
    std::string t = "/files?path=" + rest::encode_uri_component(path);
    if (user && !user->empty()) t += "&username=" + rest::encode_uri_component(*user);
    return t;
}

asio::awaitable<result<bool>> client_impl::make_dir(e2b::envd_target target, std::string path)
{
    auto r =
        co_await envd_unary("filesystem.Filesystem/MakeDir", std::move(target), protojson::path_request(path), false);
    if (!r) {
        if (r.error() == errc::already_exists) co_return false;
        co_return r.error();
    }
    co_return true;
}

asio::awaitable<result<e2b::entry_info>> client_impl::stat(e2b::envd_target target, std::string path)
{
    auto r = co_await envd_unary("filesystem.Filesystem/Stat", std::move(target), protojson::path_request(path), true);
    if (!r) co_return r.error();
    co_return protojson::parse_entry_response(*r);
}

asio::awaitable<result<std::vector<e2b::entry_info>>> client_impl::list_dir(e2b::envd_target target, std::string path,
                                                                            std::uint32_t depth)
{
    auto r = co_await envd_unary("filesystem.Filesystem/ListDir", std::move(target),
                                 protojson::list_dir_request(path, depth == 0 ? 1 : depth), true);
    if (!r) co_return r.error();
    auto entries = protojson::parse_list_dir_response(*r);
    if (!entries) co_return entries.error();
    // As the official SDK: entries of an unknown type are skipped.
    std::erase_if(*entries, [](e2b::entry_info const& e) { return e.type == e2b::file_type::unspecified; });
    co_return entries;
}

asio::awaitable<result<e2b::entry_info>> client_impl::move(e2b::envd_target target, std::string source,
                                                           std::string destination)
{
    auto r = co_await envd_unary("filesystem.Filesystem/Move", std::move(target),
                                 protojson::move_request(source, destination), false);
    if (!r) co_return r.error();
    co_return protojson::parse_entry_response(*r);
}

asio::awaitable<result<void>> client_impl::remove(e2b::envd_target target, std::string path)
{
    auto r =
        co_await envd_unary("filesystem.Filesystem/Remove", std::move(target), protojson::path_request(path), false);
    if (!r) co_return r.error();
    co_return result<void>{};
}

asio::awaitable<result<bool>> client_impl::health(e2b::envd_target target)
{
    http_request req;
    req.method = "GET";
    req.target = "/health";
    req.headers = envd_headers(target, std::nullopt);
    auto c = call(true);
    c.retry.no_retry_status = 502;  // an answer: the sandbox is not running
    auto r = co_await envd_http(target, std::move(req), c);
    if (!r) co_return r.error();
    if (r->status >= 200 && r->status < 300) co_return true;
    if (r->status == 502) co_return false;
    co_return envd_http_error("health", r->status, r->body);
}

}  // namespace prism_e2b::wire
