// In-process prism-e2b-local for tests: runs on its own io_context with two
// background threads (so a test's client io_context stays separate), on an
// ephemeral loopback port, with a random API key and admin token.
// Also: a tiny blocking HTTP/1.1 client and a Connect event-stream reader for
// tests that need byte-level control (bad input, raw envelopes).
#ifndef PRISM_E2B_TESTS_COMMON_LOCAL_SERVER_FIXTURE_HPP
#define PRISM_E2B_TESTS_COMMON_LOCAL_SERVER_FIXTURE_HPP

#include <prism_e2b/local_server.hpp>

#include "protocol/envelope.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <openssl/rand.h>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <sys/time.h>
#include <thread>
#include <vector>

namespace prism_e2b::test {

inline std::string random_token(std::size_t bytes = 16)
{
    std::vector<unsigned char> b(bytes);
    if (RAND_bytes(b.data(), static_cast<int>(b.size())) != 1) throw std::runtime_error("RAND_bytes failed");
    static constexpr char hexd[] = "0123456789abcdef";
    std::string out;
    for (auto c : b) {
        out.push_back(hexd[c >> 4]);
        out.push_back(hexd[c & 15]);
    }
    return out;
}

class local_server_fixture {
public:
    /// `tweak` may adjust the options (e.g. max_file_bytes) before start.
    template <class Tweak>
    explicit local_server_fixture(Tweak tweak) : ioc_(2), work_(boost::asio::make_work_guard(ioc_))
    {
        local::server_options opts;
        opts.api_key = "e2b_" + random_token();
        opts.admin_token = random_token();
        api_key_ = opts.api_key;
        admin_token_ = opts.admin_token;
        tweak(opts);
        server_ = std::make_unique<local::server>(ioc_.get_executor(), opts);
        if (auto r = server_->start(); !r)
            throw std::runtime_error("local server failed to start: " + r.error().to_string());
        for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { ioc_.run(); });
    }
    local_server_fixture() : local_server_fixture([](local::server_options&) {}) {}

    ~local_server_fixture()
    {
        server_->stop();
        work_.reset();
        ioc_.stop();
        for (auto& t : threads_) t.join();
    }

    std::string api_url() const { return server_->api_url(); }
    std::string sandbox_url() const { return server_->sandbox_url(); }
    std::uint16_t port() const { return server_->port(); }
    std::string const& api_key() const { return api_key_; }
    std::string const& admin_token() const { return admin_token_; }
    local::server& server() { return *server_; }

private:
    boost::asio::io_context ioc_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
    std::unique_ptr<local::server> server_;
    std::vector<std::thread> threads_;
    std::string api_key_;
    std::string admin_token_;
};

// ---------------------------------------------------------------------------
// Blocking raw HTTP helpers (test-only).

struct http_reply {
    int status = 0;
    std::map<std::string, std::string> headers;  ///< lower-case names
    std::string body;

    boost::json::value json() const { return boost::json::parse(body); }
};

using header_pairs = std::vector<std::pair<std::string, std::string>>;

/// One keep-alive HTTP/1.1 connection with a receive timeout.
class raw_http {
public:
    explicit raw_http(std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(20)) : sock_(ioc_)
    {
        sock_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
        timeval tv{};
        tv.tv_sec = static_cast<long>(timeout.count() / 1000);
        tv.tv_usec = static_cast<long>((timeout.count() % 1000) * 1000);
        ::setsockopt(sock_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }

    http_reply request(std::string const& method, std::string const& target, std::string body = {},
                       header_pairs headers = {})
    {
        namespace http = boost::beast::http;
        http::request<http::string_body> req{http::string_to_verb(method), target, 11};
        req.set(http::field::host, "127.0.0.1");
        bool has_ct = false;
        for (auto& [n, v] : headers) {
            req.set(n, v);
            if (boost::beast::iequals(n, "content-type")) has_ct = true;
        }
        if (!has_ct && !body.empty()) req.set(http::field::content_type, "application/json");
        req.body() = std::move(body);
        req.prepare_payload();
        // Resumable (serializer, parser) and retried on EINTR: a signal delivered to this
        // thread (the test process has handlers installed) interrupts a blocking call.
        boost::beast::error_code ec;
        http::request_serializer<http::string_body> sr{req};
        do {
            ec = {};
            http::write(sock_, sr, ec);
        } while (ec == boost::asio::error::interrupted);
        if (ec) throw boost::system::system_error(ec, "raw_http write");
        http::response_parser<http::string_body> parser;
        parser.body_limit(256u << 20);
        do {
            ec = {};
            http::read(sock_, buffer_, parser, ec);
        } while (ec == boost::asio::error::interrupted);
        if (ec) throw boost::system::system_error(ec, "raw_http read");
        auto res = parser.release();
        http_reply out;
        out.status = static_cast<int>(res.result_int());
        for (auto const& f : res) {
            std::string n(f.name_string());
            for (auto& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            out.headers[n] = std::string(f.value());
        }
        out.body = std::move(res.body());
        return out;
    }

private:
    boost::asio::io_context ioc_;
    boost::asio::ip::tcp::socket sock_;
    boost::beast::flat_buffer buffer_;
};

/// A server-streaming Connect call (process.Process/Start or Connect) read envelope by envelope.
class event_stream {
public:
    event_stream(std::uint16_t port, std::string const& path, std::string const& request_json, header_pairs headers,
                 std::chrono::milliseconds timeout = std::chrono::seconds(20), bool raw_body = false)
        : sock_(ioc_)
    {
        namespace http = boost::beast::http;
        sock_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
        timeval tv{};
        tv.tv_sec = static_cast<long>(timeout.count() / 1000);
        tv.tv_usec = static_cast<long>((timeout.count() % 1000) * 1000);
        ::setsockopt(sock_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        http::request<http::string_body> req{http::verb::post, path, 11};
        req.set(http::field::host, "127.0.0.1");
        req.set(http::field::content_type, "application/connect+json");
        req.set("Connect-Protocol-Version", "1");
        for (auto& [n, v] : headers) req.set(n, v);
        req.body() = raw_body ? request_json : wire::encode_envelope(request_json);
        req.prepare_payload();
        http::write(sock_, req);
        parser_.body_limit(boost::none);
        http::read_header(sock_, buffer_, parser_);
        status_ = static_cast<int>(parser_.get().result_int());
    }

    int status() const noexcept { return status_; }

    /// The next envelope; nullopt when the stream ended (or was cut) without one.
    std::optional<wire::envelope> next()
    {
        namespace http = boost::beast::http;
        for (;;) {
            if (!pending_.empty()) {
                auto e = std::move(pending_.front());
                pending_.erase(pending_.begin());
                return e;
            }
            if (parser_.is_done() || failed_) return std::nullopt;
            boost::beast::error_code ec;
            http::read_some(sock_, buffer_, parser_, ec);
            auto& body = parser_.get().body();
            if (!body.empty()) {
                if (!decoder_.feed(body, pending_)) throw std::runtime_error("bad envelope from server");
                body.clear();
            }
            if (ec) {
                failed_ = true;
                cut_ = !parser_.is_done();
            }
        }
    }

    /// The next message as JSON, skipping keepalives; nullopt at the end.
    std::optional<boost::json::object> next_event(bool skip_keepalive = true)
    {
        for (;;) {
            auto e = next();
            if (!e) return std::nullopt;
            auto v = boost::json::parse(e->payload).as_object();
            if (e->end_stream()) {
                end_ = v;
                return std::nullopt;
            }
            if (skip_keepalive && v.contains("event") && v["event"].as_object().contains("keepalive")) continue;
            return v;
        }
    }

    /// The end-of-stream message ({} or {"error":...}) once next_event() returned nullopt.
    std::optional<boost::json::object> const& end_message() const noexcept { return end_; }
    /// True when the connection dropped before the HTTP response was complete.
    bool cut() const noexcept { return cut_; }

private:
    boost::asio::io_context ioc_;
    boost::asio::ip::tcp::socket sock_;
    boost::beast::flat_buffer buffer_;
    boost::beast::http::response_parser<boost::beast::http::string_body> parser_;
    wire::envelope_decoder decoder_;
    std::vector<wire::envelope> pending_;
    std::optional<boost::json::object> end_;
    int status_ = 0;
    bool failed_ = false;
    bool cut_ = false;
};

// ---------------------------------------------------------------------------
// Shortcuts for the raw wire.

struct sandbox_ref {
    std::string id;
    std::string token;
};

inline header_pairs api_headers(local_server_fixture const& f) { return {{"X-API-KEY", f.api_key()}}; }
inline header_pairs admin_headers(local_server_fixture const& f) { return {{"X-Admin-Token", f.admin_token()}}; }
inline header_pairs envd_headers(sandbox_ref const& sb)
{
    return {{"E2b-Sandbox-Id", sb.id}, {"X-Access-Token", sb.token}};
}
/// envd_headers for a unary Connect call (a JSON body).
inline header_pairs rpc_headers(sandbox_ref const& sb)
{
    auto h = envd_headers(sb);
    h.emplace_back("Content-Type", "application/json");
    return h;
}

/// POST /sandboxes; throws unless 201.
inline sandbox_ref create_sandbox(local_server_fixture const& f,
                                  std::string body = R"({"templateID":"base","timeout":300})")
{
    raw_http c(f.port());
    auto r = c.request("POST", "/sandboxes", std::move(body), api_headers(f));
    if (r.status != 201) throw std::runtime_error("create answered " + std::to_string(r.status) + ": " + r.body);
    auto o = r.json().as_object();
    return {std::string(o["sandboxID"].as_string()), std::string(o["envdAccessToken"].as_string())};
}

/// The host pid of the process a sandbox knows as `pid` (the API reports pids as the
/// sandbox sees them): the host process in the sandbox's memory cgroup whose innermost
/// pid (NSpid) is `pid`. 0 when there is none.
inline std::uint32_t host_pid_of(std::string const& sandbox_id, std::uint32_t pid)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    for (auto const& e : fs::directory_iterator("/proc", ec)) {
        auto const name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream cg(e.path() / "cgroup");
        std::string const groups((std::istreambuf_iterator<char>(cg)), std::istreambuf_iterator<char>());
        if (groups.find(":memory:") == std::string::npos || groups.find("/" + sandbox_id + "\n") == std::string::npos)
            continue;
        std::ifstream status(e.path() / "status");
        std::string line;
        while (std::getline(status, line)) {
            if (line.rfind("NSpid:", 0) != 0) continue;
            auto const last = line.find_last_of(" \t");
            if (std::stoul(line.substr(last + 1)) == pid) return static_cast<std::uint32_t>(std::stoul(name));
        }
    }
    return 0;
}

/// StartRequest JSON running `script` with bash -c.
inline std::string start_json(std::string const& script, bool open_stdin = false, std::string const& cwd = {})
{
    boost::json::object proc;
    proc["cmd"] = "/bin/bash";
    proc["args"] = boost::json::array{"-c", script};
    if (!cwd.empty()) proc["cwd"] = cwd;
    boost::json::object o;
    o["process"] = std::move(proc);
    o["stdin"] = open_stdin;
    return boost::json::serialize(o);
}

/// Result of running a command to its end over a Start stream.
struct run_result {
    std::string stdout_text;
    std::string stderr_text;
    std::optional<boost::json::object> end;  ///< the end event, if any
    std::uint32_t pid = 0;
};

std::string decode_b64_for_tests(std::string_view s);

inline run_result run_command(std::uint16_t port, sandbox_ref const& sb, std::string const& script,
                              header_pairs extra = {})
{
    auto h = envd_headers(sb);
    h.insert(h.end(), extra.begin(), extra.end());
    event_stream s(port, "/process.Process/Start", start_json(script), h);
    run_result out;
    while (auto ev = s.next_event()) {
        auto& e = (*ev)["event"].as_object();
        if (e.contains("start"))
            out.pid = static_cast<std::uint32_t>(e["start"].as_object()["pid"].to_number<std::int64_t>());
        else if (e.contains("data")) {
            auto& d = e["data"].as_object();
            if (d.contains("stdout")) out.stdout_text += decode_b64_for_tests(d["stdout"].as_string());
            if (d.contains("stderr")) out.stderr_text += decode_b64_for_tests(d["stderr"].as_string());
        } else if (e.contains("end"))
            out.end = e["end"].as_object();
    }
    return out;
}

inline run_result run_command(local_server_fixture const& f, sandbox_ref const& sb, std::string const& script,
                              header_pairs extra = {})
{
    return run_command(f.port(), sb, script, std::move(extra));
}

inline std::string decode_b64_for_tests(std::string_view s)
{
    static constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    unsigned buf = 0;
    int bits = 0;
    for (char c : s) {
        if (c == '=') break;
        auto const v = alphabet.find(c);
        if (v == std::string_view::npos) throw std::runtime_error("bad base64 from server");
        buf = (buf << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((buf >> bits) & 0xff));
        }
    }
    return out;
}

}  // namespace prism_e2b::test

#endif
