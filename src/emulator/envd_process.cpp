// process.Process over the Connect protocol with the JSON codec: Start and
// Connect stream envelopes (start, data, keepalive, end; errors in the
// end-of-stream envelope); List, SendInput, CloseStdin, SendSignal are unary.
#include "emulator/server_state.hpp"
#include "emulator/use_nothrow.hpp"
#include "protocol/base64.hpp"
#include "protocol/envelope.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <csignal>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace asio::experimental::awaitable_operators;

namespace {

struct rpc_error {
    std::string code;
    std::string message;
};

std::string connect_code_for(error const& e)
{
    if (e == errc::not_found) return "not_found";
    if (e == errc::invalid_argument) return "invalid_argument";
    if (e == errc::paused) return "unavailable";
    if (e == errc::unauthenticated) return "unauthenticated";
    return "internal";
}

std::string end_stream_payload(std::optional<rpc_error> const& err)
{
    if (!err) return "{}";
    json::object o, e;
    e["code"] = err->code;
    e["message"] = err->message;
    o["error"] = std::move(e);
    return json::serialize(o);
}

std::optional<std::uint32_t> as_u32(json::value const* v)
{
    if (!v) return std::nullopt;
    if (v->is_int64() && v->as_int64() >= 0 && v->as_int64() <= UINT32_MAX)
        return static_cast<std::uint32_t>(v->as_int64());
    if (v->is_uint64() && v->as_uint64() <= UINT32_MAX) return static_cast<std::uint32_t>(v->as_uint64());
    if (v->is_string()) {
        auto const& s = v->as_string();
        if (s.empty() || s.size() > 10) return std::nullopt;
        std::uint64_t n = 0;
        for (char c : s) {
            if (c < '0' || c > '9') return std::nullopt;
            n = n * 10 + static_cast<std::uint64_t>(c - '0');
        }
        if (n <= UINT32_MAX) return static_cast<std::uint32_t>(n);
    }
    return std::nullopt;
}

json::object const* get_obj(json::object const& o, std::string_view k)
{
    auto it = o.find(k);
    return it != o.end() && it->value().is_object() ? &it->value().as_object() : nullptr;
}

/// Finds the process a ProcessSelector names.
std::variant<std::shared_ptr<process>, rpc_error> select_process(sandbox& sb, json::object const& req)
{
    auto const* sel = get_obj(req, "process");
    if (!sel) return rpc_error{"invalid_argument", "process selector is required"};
    std::lock_guard lk(sb.mutex);
    if (auto it = sel->find("pid"); it != sel->end()) {
        auto pid = as_u32(&it->value());
        if (!pid) return rpc_error{"invalid_argument", "pid must be an unsigned 32-bit integer"};
        auto p = sb.processes.find(*pid);
        if (p == sb.processes.end())
            return rpc_error{"not_found", "process with pid " + std::to_string(*pid) + " not found"};
        return p->second;
    }
    if (auto it = sel->find("tag"); it != sel->end() && it->value().is_string()) {
        std::string tag(it->value().as_string());
        for (auto const& [pid, p] : sb.processes)
            if (p->config().tag && *p->config().tag == tag) return p;
        return rpc_error{"not_found", "process with tag " + tag + " not found"};
    }
    return rpc_error{"invalid_argument", "process selector needs a pid or a tag"};
}

json::object event_json(process_event const& ev)
{
    json::object event;
    if (ev.type == process_event::kind::end) {
        json::object end;
        if (ev.exit_code != 0) end["exitCode"] = ev.exit_code;  // protobuf-JSON omits defaults
        if (ev.exited) end["exited"] = true;
        end["status"] = ev.status;
        if (ev.error) end["error"] = *ev.error;
        event["end"] = std::move(end);
    } else {
        json::object data;
        char const* key = ev.type == process_event::kind::stdout_data ? "stdout"
                          : ev.type == process_event::kind::pty_data  ? "pty"
                                                                      : "stderr";
        data[key] = prism_e2b::detail::base64_encode(ev.data);
        event["data"] = std::move(data);
    }
    json::object o;
    o["event"] = std::move(event);
    return o;
}

/// Parses the single request message of a server-streaming call.
std::variant<json::object, rpc_error> stream_request(http_request const& req)
{
    wire::envelope_decoder dec(1u << 20);
    std::vector<wire::envelope> envs;
    if (auto r = dec.feed(req.body, envs); !r)
        return rpc_error{"invalid_argument", "malformed request envelope: " + r.error().message()};
    if (dec.has_partial()) return rpc_error{"invalid_argument", "truncated request envelope"};
    json::object const* found = nullptr;
    json::value v;
    for (auto const& e : envs) {
        if (e.end_stream()) continue;
        if (found) return rpc_error{"invalid_argument", "server-streaming call with more than one request message"};
        boost::system::error_code ec;
        v = json::parse(e.payload, ec);
        if (ec || !v.is_object()) return rpc_error{"invalid_argument", "request message is not a JSON object"};
        found = &v.as_object();
    }
    if (!found) return rpc_error{"invalid_argument", "missing request message"};
    return *found;
}

/// Streams a process's events until its end, a deadline, an abort or a lost client.
/// The stream ends at the call's deadline; killing the process then is
/// arm_deadline_kill's (Start), whether or not anyone still reads the stream.
asio::awaitable<void> stream_loop(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                  std::shared_ptr<process> p, std::shared_ptr<event_queue> q, stream_timing timing,
                                  response_sink& sink)
{
    auto const ex = co_await asio::this_coro::executor;
    auto const now = std::chrono::steady_clock::now();
    auto deadline = timing.deadline;
    auto const keepalive = timing.keepalive;
    auto next_keepalive = keepalive ? std::optional(now + *keepalive) : std::nullopt;
    auto cut_budget = st->faults.take_stream_cut();
    std::size_t sent_output = 0;

    header_list no_headers;
    bool const started = co_await sink.begin_stream(200, "application/connect+json", std::move(no_headers));
    if (!started) co_return;
    {
        json::object start, event, o;
        start["pid"] = p->pid();
        event["start"] = std::move(start);
        o["event"] = std::move(event);
        std::string first = wire::encode_envelope(json::serialize(o));
        bool const written = co_await sink.write_chunk(std::move(first));
        if (!written) co_return;
    }
    asio::steady_timer timer(ex);
    for (;;) {
        // The deadline first: once it passed the call is over, even when the
        // process's end (e.g. from arm_deadline_kill's SIGKILL) is already queued.
        auto const t = std::chrono::steady_clock::now();
        if (deadline && t >= *deadline) {
            bool paused;
            {
                std::lock_guard lk(sb->mutex);
                paused = sb->state == sandbox_state::paused;
            }
            if (paused) {
                deadline = t + std::chrono::seconds(1);  // a frozen sandbox's clock does not run
            } else {
                std::string last =
                    wire::encode_envelope(end_stream_payload(rpc_error{
                                              "deadline_exceeded", "the request deadline (Connect-Timeout-Ms) passed"}),
                                          wire::envelope_flag_end_stream);
                co_await sink.write_chunk(std::move(last));
                co_await sink.finish_stream();
                co_return;
            }
        }
        process_event ev;
        while (q->pop(ev)) {
            bool const is_end = ev.type == process_event::kind::end;
            std::string chunk = wire::encode_envelope(json::serialize(event_json(ev)));
            if (cut_budget && !is_end) {
                if (sent_output + ev.data.size() >= *cut_budget) {
                    // Injected fault: send what fits, then drop the connection without an end event.
                    auto const room = *cut_budget - std::min(*cut_budget, sent_output);
                    if (room > 0) {
                        process_event part = ev;
                        part.data.resize(room);
                        std::string partial = wire::encode_envelope(json::serialize(event_json(part)));
                        co_await sink.write_chunk(std::move(partial));
                    }
                    sink.abort();
                    co_return;
                }
                sent_output += ev.data.size();
            }
            bool const written = co_await sink.write_chunk(std::move(chunk));
            if (!written) co_return;
            if (is_end) {
                std::string last =
                    wire::encode_envelope(end_stream_payload(std::nullopt), wire::envelope_flag_end_stream);
                co_await sink.write_chunk(std::move(last));
                co_await sink.finish_stream();
                co_return;
            }
        }
        if (q->closed()) {
            if (q->aborted()) {
                sink.abort();  // the sandbox went away under the stream, as a VM would
                co_return;
            }
            std::string last =
                wire::encode_envelope(end_stream_payload(rpc_error{"unknown", "process stream ended without an exit"}),
                                      wire::envelope_flag_end_stream);
            co_await sink.write_chunk(std::move(last));
            co_await sink.finish_stream();
            co_return;
        }
        if (next_keepalive && t >= *next_keepalive) {
            std::string ka = wire::encode_envelope(R"({"event":{"keepalive":{}}})");
            bool const written = co_await sink.write_chunk(std::move(ka));
            if (!written) co_return;
            next_keepalive = t + *keepalive;
        }
        timer.expires_at(stream_wake_time(t, deadline, next_keepalive));
        co_await (q->wait() || timer.async_wait(use_nothrow));
    }
}

/// Streams until the end (stream_loop) or until the client goes away, whichever
/// comes first; a watcher that left stops being fed at once.
asio::awaitable<void> stream_events(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                    std::shared_ptr<process> p, std::shared_ptr<event_queue> q, stream_timing timing,
                                    response_sink& sink)
{
    struct unsubscribe_guard {
        std::shared_ptr<process> p;
        std::shared_ptr<event_queue> q;
        ~unsubscribe_guard() { p->unsubscribe(q); }
    } guard{p, q};
    co_await (stream_loop(st, sb, p, q, timing, sink) || sink.wait_peer_closed());
}

asio::awaitable<void> send_stream_error(response_sink& sink, rpc_error err)
{
    // Plain statements only: GCC 12 mishandles temporaries in co_await inside conditions.
    std::string payload = wire::encode_envelope(end_stream_payload(err), wire::envelope_flag_end_stream);
    header_list none;
    std::string ctype = "application/connect+json";
    bool ok = co_await sink.begin_stream(200, std::move(ctype), std::move(none));
    if (!ok) co_return;
    ok = co_await sink.write_chunk(std::move(payload));
    if (!ok) co_return;
    co_await sink.finish_stream();
}

/// envd kills a started process when its call's deadline passes, whether or not
/// the client is still watching (the clock stops while the sandbox is paused).
void arm_deadline_kill(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb, std::shared_ptr<process> p,
                       std::chrono::steady_clock::time_point first_deadline)
{
    std::weak_ptr<process> weak = p;
    std::weak_ptr<sandbox> weak_sb = sb;
    asio::co_spawn(
        st->ex,
        [weak, weak_sb, first_deadline]() -> asio::awaitable<void> {
            asio::steady_timer t(co_await asio::this_coro::executor);
            auto deadline = first_deadline;
            for (;;) {
                t.expires_at(deadline);
                co_await t.async_wait(use_nothrow);
                auto proc = weak.lock();
                auto s = weak_sb.lock();
                if (!proc || !s || proc->ended()) co_return;
                bool paused;
                {
                    std::lock_guard lk(s->mutex);
                    paused = s->state == sandbox_state::paused;
                }
                if (!paused) {
                    proc->signal(SIGKILL);
                    co_return;
                }
                deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
            }
        },
        asio::detached);
}

asio::awaitable<void> start(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb, http_request const& req,
                            response_sink& sink)
{
    auto parsed = stream_request(req);
    if (auto* e = std::get_if<rpc_error>(&parsed)) {
        co_await send_stream_error(sink, *e);
        co_return;
    }
    auto const& o = std::get<json::object>(parsed);
    auto const* pc = get_obj(o, "process");
    if (!pc) {
        rpc_error err{"invalid_argument", "process config is required"};
        co_await send_stream_error(sink, err);
        co_return;
    }
    std::optional<std::pair<unsigned short, unsigned short>> pty;
    if (auto const* pt = get_obj(o, "pty")) {
        auto const* size = get_obj(*pt, "size");
        auto cols = size ? as_u32(size->if_contains("cols")) : std::nullopt;
        auto rows = size ? as_u32(size->if_contains("rows")) : std::nullopt;
        pty = std::pair<unsigned short, unsigned short>(
            static_cast<unsigned short>(std::clamp<std::uint32_t>(cols.value_or(80), 1, 1000)),
            static_cast<unsigned short>(std::clamp<std::uint32_t>(rows.value_or(24), 1, 1000)));
    }
    process_config cfg;
    auto bad = [&](std::string m) -> asio::awaitable<void> {
        rpc_error e{"invalid_argument", std::move(m)};
        co_await send_stream_error(sink, std::move(e));
    };
    if (auto it = pc->find("cmd"); it != pc->end() && it->value().is_string())
        cfg.cmd = std::string(it->value().as_string());
    if (cfg.cmd.empty() || cfg.cmd.find('\0') != std::string::npos) {
        co_await bad("process.cmd is required");
        co_return;
    }
    if (auto it = pc->find("args"); it != pc->end()) {
        if (!it->value().is_array()) {
            co_await bad("process.args must be an array of strings");
            co_return;
        }
        for (auto const& a : it->value().as_array()) {
            if (!a.is_string() || a.as_string().find('\0') != json::string::npos) {
                co_await bad("process.args must be an array of strings");
                co_return;
            }
            cfg.args.emplace_back(a.as_string());
        }
    }
    if (auto it = pc->find("envs"); it != pc->end()) {
        if (!it->value().is_object()) {
            co_await bad("process.envs must be a map of strings");
            co_return;
        }
        for (auto const& [k, v] : it->value().as_object()) {
            if (!v.is_string() || k.empty() || k.find('=') != json::string_view::npos ||
                k.find('\0') != json::string_view::npos || v.as_string().find('\0') != json::string::npos) {
                co_await bad("process.envs must map names (no '=' or NUL) to strings");
                co_return;
            }
            cfg.envs[std::string(k)] = std::string(v.as_string());
        }
    }
    if (auto it = pc->find("cwd"); it != pc->end() && it->value().is_string() && !it->value().as_string().empty())
        cfg.cwd = std::string(it->value().as_string());
    if (auto it = o.find("tag"); it != o.end() && it->value().is_string())
        cfg.tag = std::string(it->value().as_string());
    bool open_stdin = true;  // absent means true (process.proto, StartRequest.stdin)
    if (auto it = o.find("stdin"); it != o.end() && it->value().is_bool()) open_stdin = it->value().as_bool();

    auto const who = basic_auth_user(req.header("authorization"));
    auto const user = who ? sandbox_user(*sb, *who) : std::nullopt;
    if (!user) {
        rpc_error err{"unauthenticated", "invalid user: only 'user' and 'root' exist in this sandbox"};
        co_await send_stream_error(sink, err);
        co_return;
    }
    auto p = st->spawn(sb, std::move(cfg), open_stdin, *user, pty);
    if (!p) {
        rpc_error err{connect_code_for(p.error()), p.error().message()};
        co_await send_stream_error(sink, err);
        co_return;
    }
    auto q = (*p)->subscribe(co_await asio::this_coro::executor);
    (*p)->start_io();
    auto const timing = read_stream_timing(req, std::chrono::steady_clock::now());
    if (timing.deadline) arm_deadline_kill(st, sb, *p, *timing.deadline);
    if (!q) {
        rpc_error err{"internal", "process ended before it could be watched"};
        co_await send_stream_error(sink, err);
        co_return;
    }
    co_await stream_events(st, sb, *p, q, timing, sink);
}

asio::awaitable<void> connect(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb, http_request const& req,
                              response_sink& sink)
{
    auto parsed = stream_request(req);
    if (auto* e = std::get_if<rpc_error>(&parsed)) {
        co_await send_stream_error(sink, *e);
        co_return;
    }
    auto sel = select_process(*sb, std::get<json::object>(parsed));
    if (auto* e = std::get_if<rpc_error>(&sel)) {
        co_await send_stream_error(sink, *e);
        co_return;
    }
    auto p = std::get<std::shared_ptr<process>>(sel);
    auto q = p->subscribe(co_await asio::this_coro::executor);
    if (!q) {
        rpc_error err{"not_found", "process with pid " + std::to_string(p->pid()) + " not found"};
        co_await send_stream_error(sink, err);
        co_return;
    }
    auto const timing = read_stream_timing(req, std::chrono::steady_clock::now());
    co_await stream_events(st, sb, p, q, timing, sink);
}

http_response unary_ok(json::object const& o)
{
    http_response r;
    r.body = json::serialize(o);
    return r;
}

}  // namespace

asio::awaitable<void> handle_process_rpc(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                         http_request req, response_sink& sink)
{
    std::string_view const method = std::string_view(req.path).substr(std::string_view("/process.Process/").size());
    std::string_view const ctype = req.header("content-type");
    bool const streaming = method == "Start" || method == "Connect";
    if (req.method != "POST") {
        co_await sink.send(connect_error("unimplemented", "only POST is supported"));
        co_return;
    }
    if (streaming) {
        if (ctype.rfind("application/connect+json", 0) != 0) {
            http_response r = connect_error("internal", "unsupported content type; use application/connect+json");
            r.status = 415;
            co_await sink.send(std::move(r));
            co_return;
        }
        if (method == "Start")
            co_await start(st, sb, req, sink);
        else
            co_await connect(st, sb, req, sink);
        co_return;
    }
    json::value v;
    if (auto refused = parse_unary_json(req, v)) {
        co_await sink.send(std::move(*refused));
        co_return;
    }
    auto const& o = v.as_object();

    if (method == "List") {
        json::array procs;
        std::vector<std::shared_ptr<process>> ps;
        {
            std::lock_guard lk(sb->mutex);
            for (auto const& [pid, p] : sb->processes) ps.push_back(p);
        }
        for (auto const& p : ps) {
            json::object cfg, info, envs;
            cfg["cmd"] = p->config().cmd;
            json::array args;
            for (auto const& a : p->config().args) args.emplace_back(a);
            cfg["args"] = std::move(args);
            for (auto const& [k, val] : p->config().envs) envs[k] = val;
            cfg["envs"] = std::move(envs);
            if (p->config().cwd) cfg["cwd"] = *p->config().cwd;
            info["config"] = std::move(cfg);
            info["pid"] = p->pid();
            if (p->config().tag) info["tag"] = *p->config().tag;
            procs.push_back(std::move(info));
        }
        json::object out;
        out["processes"] = std::move(procs);
        co_await sink.send(unary_ok(out));
        co_return;
    }
    if (method == "SendInput" || method == "CloseStdin" || method == "SendSignal") {
        auto sel = select_process(*sb, o);
        if (auto* e = std::get_if<rpc_error>(&sel)) {
            co_await sink.send(connect_error(e->code, e->message));
            co_return;
        }
        auto p = std::get<std::shared_ptr<process>>(sel);
        if (method == "SendSignal") {
            int sig = 0;
            if (auto it = o.find("signal"); it != o.end()) {
                auto const& s = it->value();
                if (s.is_string())
                    sig = s.as_string() == "SIGNAL_SIGKILL" ? SIGKILL : s.as_string() == "SIGNAL_SIGTERM" ? SIGTERM : 0;
                else if (auto n = as_u32(&s); n && (*n == 9 || *n == 15))
                    sig = static_cast<int>(*n);
            }
            if (sig == 0) {
                co_await sink.send(
                    connect_error("invalid_argument", "signal must be SIGNAL_SIGKILL or SIGNAL_SIGTERM"));
                co_return;
            }
            p->signal(sig);
            http_response ok = unary_ok({});
            co_await sink.send(std::move(ok));
            co_return;
        }
        if (method == "CloseStdin") {
            auto r = p->close_stdin();
            http_response resp = r ? unary_ok({}) : connect_error(connect_code_for(r.error()), r.error().message());
            co_await sink.send(std::move(resp));
            co_return;
        }
        auto const* input = get_obj(o, "input");
        std::optional<std::string> bytes;
        if (input) {
            auto it = input->find("stdin");
            if (it == input->end()) it = input->find("pty");
            if (it != input->end() && it->value().is_string())
                bytes = prism_e2b::detail::base64_decode(it->value().as_string());
            else if (it == input->end())
                bytes = std::string();
        }
        if (!bytes) {
            co_await sink.send(connect_error("invalid_argument", "input.stdin must be base64"));
            co_return;
        }
        auto r = co_await p->write_stdin(std::move(*bytes));
        http_response resp = r ? unary_ok({}) : connect_error(connect_code_for(r.error()), r.error().message());
        co_await sink.send(std::move(resp));
        co_return;
    }
    if (method == "Update") {
        auto sel = select_process(*sb, o);
        http_response resp;
        if (auto* e = std::get_if<rpc_error>(&sel)) {
            resp = connect_error(e->code, e->message);
        } else {
            auto const* pt = get_obj(o, "pty");
            auto const* size = pt ? get_obj(*pt, "size") : nullptr;
            auto cols = size ? as_u32(size->if_contains("cols")) : std::nullopt;
            auto rows = size ? as_u32(size->if_contains("rows")) : std::nullopt;
            if (!cols || !rows || *cols == 0 || *rows == 0 || *cols > 1000 || *rows > 1000) {
                resp = connect_error("invalid_argument", "pty.size needs cols and rows between 1 and 1000");
            } else {
                auto r = std::get<std::shared_ptr<process>>(sel)->resize(static_cast<unsigned short>(*cols),
                                                                         static_cast<unsigned short>(*rows));
                resp = r ? unary_ok({}) : connect_error(connect_code_for(r.error()), r.error().message());
            }
        }
        co_await sink.send(std::move(resp));
        co_return;
    }
    co_await sink.send(
        connect_error("unimplemented", "process.Process/" + std::string(method) + " is not implemented"));
}

}  // namespace prism_e2b::local::detail
