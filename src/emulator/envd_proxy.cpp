// The server's side of the envd agent: its socket, connection pool and proxy (envd_proxy.hpp).
#include "emulator/envd_proxy.hpp"

#include "emulator/envd_agent.hpp"
#include "emulator/server_state.hpp"
#include "emulator/use_nothrow.hpp"
#include "protocol/ascii_lower.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;
using local_socket = asio::local::stream_protocol::socket;
using namespace asio::experimental::awaitable_operators;

namespace {

std::optional<sockaddr_un> socket_address(fs::path const& path)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    auto const& s = path.native();
    if (s.size() >= sizeof addr.sun_path) return std::nullopt;
    std::memcpy(addr.sun_path, s.c_str(), s.size() + 1);
    return addr;
}

/// Headers that belong to one hop (or to the server alone) and are not forwarded.
bool hop_header(std::string_view lower)
{
    for (std::string_view h : {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
                               "upgrade", "content-length", "x-access-token", "server", "server-timing"})
        if (lower == h) return true;
    return lower == agent_cut_header;
}

http::request<http::string_body> upstream_request(server_state& st, sandbox const& sb, http_request& req)
{
    http::request<http::string_body> out;
    out.method_string(req.method);
    out.target(req.target);
    out.version(11);
    for (auto const& [n, v] : req.headers)
        if (!hop_header(n)) out.insert(n, v);
    bool const stream_rpc = req.path == "/process.Process/Start" || req.path == "/process.Process/Connect";
    if (stream_rpc)
        if (auto cut = st.faults.take_stream_cut()) out.set(agent_cut_header, std::to_string(*cut));
    if (req.path == "/process.Process/Start")
        if (auto delay = st.faults.take_kill_during_exec(sb.id)) st.schedule_kill(sb.id, *delay);
    out.body() = std::move(req.body);
    out.keep_alive(true);
    out.prepare_payload();
    return out;
}

/// The next piece of the answer's body into `piece`: how many bytes, nullopt when the agent failed.
asio::awaitable<std::optional<std::size_t>> read_piece(local_socket& sock, beast::flat_buffer& buf,
                                                       http::response_parser<http::buffer_body>& parser,
                                                       std::array<char, 16384>& piece)
{
    auto& body = parser.get().body();
    body.data = piece.data();
    body.size = piece.size();
    auto [ec, n] = co_await http::async_read_some(sock, buf, parser, use_nothrow);
    if (ec && ec != http::error::need_buffer) co_return std::nullopt;
    co_return piece.size() - body.size;
}

/// Relays the answer whose head `parser` holds: chunk by chunk for a stream, whole otherwise.
/// Returns true when the exchange completed and the connection may be reused.
asio::awaitable<bool> relay(local_socket& sock, beast::flat_buffer& buf,
                            http::response_parser<http::buffer_body>& parser, response_sink& sink)
{
    auto const& msg = parser.get();
    std::string content_type(msg[http::field::content_type]);
    header_list headers;
    for (auto const& f : msg) {
        auto const name = protocol::ascii_lower(f.name_string());
        if (!hop_header(name) && name != "content-type") headers.emplace_back(name, std::string(f.value()));
    }
    std::array<char, 16384> piece{};
    if (msg.chunked()) {
        if (!co_await sink.begin_stream(msg.result_int(), std::move(content_type), std::move(headers))) co_return false;
        while (!parser.is_done()) {
            auto got = co_await read_piece(sock, buf, parser, piece);
            if (!got) {
                sink.abort();  // the agent cut the stream: so do we
                co_return false;
            }
            if (*got > 0 && !co_await sink.write_chunk(std::string(piece.data(), *got))) co_return false;
        }
        co_await sink.finish_stream();
        co_return parser.keep_alive();
    }
    http_response r;
    r.status = msg.result_int();
    r.content_type = std::move(content_type);
    r.headers = std::move(headers);
    while (!parser.is_done()) {
        auto got = co_await read_piece(sock, buf, parser, piece);
        if (!got) co_return false;
        r.body.append(piece.data(), *got);
    }
    co_await sink.send(std::move(r));
    co_return parser.keep_alive();
}

http_response agent_unreachable(http_request const& req, std::string const& id)
{
    std::string const msg = "the envd of sandbox " + id + " does not answer";
    if (req.path.rfind("/process.Process/", 0) == 0 || req.path.rfind("/filesystem.Filesystem/", 0) == 0) {
        auto r = connect_error("unavailable", msg);
        r.status = 502;
        return r;
    }
    return rest_error(502, msg);
}

}  // namespace

result<unique_fd> listen_agent_socket(fs::path const& path)
{
    auto addr = socket_address(path);
    if (!addr) return error(errc::invalid_argument, "the state directory's path is too long for a socket", {"create"});
    unique_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) return error(errc::server_error, "cannot create the envd socket", {"create"});
    ::unlink(path.c_str());
    if (::bind(fd.get(), reinterpret_cast<sockaddr const*>(&*addr), sizeof *addr) != 0 ||
        ::chmod(path.c_str(), 0600) != 0 || ::listen(fd.get(), SOMAXCONN) != 0)
        return error(boost::system::error_code(errno, boost::system::system_category()),
                     "cannot listen on the envd socket", {"create"});
    return fd;
}

unique_fd connect_unix(fs::path const& path)
{
    auto addr = socket_address(path);
    if (!addr) return {};
    unique_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr const*>(&*addr), sizeof *addr) != 0) return {};
    return fd;
}

std::optional<agent_reply> agent_get(fs::path const& path, std::string const& target, std::chrono::milliseconds timeout)
{
    auto const fd = connect_unix(path);
    if (!fd) return std::nullopt;
    std::string const req = "GET " + target + " HTTP/1.1\r\nHost: envd\r\nConnection: close\r\n\r\n";
    if (::send(fd.get(), req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) return std::nullopt;
    auto const deadline = std::chrono::steady_clock::now() + timeout;
    std::string in;
    for (;;) {
        auto const left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return std::nullopt;
        pollfd p{fd.get(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        char buf[4096];
        ssize_t const n = ::recv(fd.get(), buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        in.append(buf, static_cast<std::size_t>(n));
    }
    // "HTTP/1.1 204 ..." then headers; the agent closes after the answer (Connection: close).
    if (in.size() < 12 || in.compare(0, 5, "HTTP/") != 0) return std::nullopt;
    agent_reply r;
    r.status = std::atoi(in.c_str() + 9);
    if (auto const body = in.find("\r\n\r\n"); body != std::string::npos) r.body = in.substr(body + 4);
    return r;
}

std::uint32_t agent_peak(sandbox& sb)
{
    {
        std::lock_guard lk(sb.mutex);
        if (sb.state != sandbox_state::running) return sb.peak;
    }
    auto reply = agent_get(sb.agent->socket_path(), agent_stats_path, std::chrono::seconds(10));
    boost::system::error_code ec;
    auto v = reply ? boost::json::parse(reply->body, ec) : boost::json::value();
    auto const* peak = !ec && v.is_object() ? v.as_object().if_contains("peak") : nullptr;
    std::lock_guard lk(sb.mutex);
    if (peak && peak->is_number()) sb.peak = std::max(sb.peak, peak->to_number<std::uint32_t>());
    return sb.peak;
}

std::uint32_t agent_running(sandbox& sb)
{
    {
        std::lock_guard lk(sb.mutex);
        if (sb.state != sandbox_state::running) return 0;
    }
    auto reply = agent_get(sb.agent->socket_path(), agent_stats_path, std::chrono::seconds(10));
    boost::system::error_code ec;
    auto v = reply ? boost::json::parse(reply->body, ec) : boost::json::value();
    auto const* running = !ec && v.is_object() ? v.as_object().if_contains("running") : nullptr;
    return running && running->is_number() ? running->to_number<std::uint32_t>() : 0;
}

std::optional<local_socket> agent_pool::take(bool& reused)
{
    std::lock_guard lk(mutex_);
    reused = false;
    if (idle_.empty()) return std::nullopt;
    auto s = std::move(idle_.back());
    idle_.pop_back();
    reused = true;
    return s;
}

void agent_pool::give_back(local_socket s, std::uint64_t generation)
{
    std::lock_guard lk(mutex_);
    if (generation == generation_ && idle_.size() < 32) idle_.push_back(std::move(s));
}

void agent_pool::reset()
{
    std::lock_guard lk(mutex_);
    ++generation_;
    idle_.clear();
}

std::uint64_t agent_pool::generation() const
{
    std::lock_guard lk(mutex_);
    return generation_;
}

asio::awaitable<void> proxy_to_agent(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb, http_request req,
                                     response_sink& sink)
{
    if (req.path.rfind("/_prism/", 0) == 0) {  // the agent's own routes are not a client's business
        co_await sink.send(rest_error(404, "no such route"));
        co_return;
    }
    co_await forward_to_agent(std::move(st), std::move(sb), std::move(req), sink);
}

asio::awaitable<void> forward_to_agent(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb, http_request req,
                                       response_sink& sink)
{
    auto const& pool = *sb->agent;
    auto const generation = pool.generation();
    auto upstream = upstream_request(*st, *sb, req);
    asio::local::stream_protocol::endpoint const agent_endpoint(pool.socket_path().native());
    // A pooled connection may have been closed by the agent meanwhile: then once more on a new one.
    for (int attempt = 0; attempt < 2; ++attempt) {
        bool reused = false;
        auto taken = sb->agent->take(reused);
        local_socket sock = taken ? std::move(*taken) : local_socket(st->ex);
        if (!reused) {
            auto [ec] = co_await sock.async_connect(agent_endpoint, use_nothrow);
            if (ec) break;
        }
        auto [wec, wn] = co_await http::async_write(sock, upstream, use_nothrow);
        if (wec) {
            if (reused) continue;
            break;
        }
        beast::flat_buffer buf;
        http::response_parser<http::buffer_body> parser;
        parser.body_limit(boost::none);
        auto [rec, rn] = co_await http::async_read_header(sock, buf, parser, use_nothrow);
        if (rec) {
            if (reused && rn == 0) continue;
            break;
        }
        // The client going away cuts the upstream stream too: the agent sees its peer close.
        auto outcome = co_await (relay(sock, buf, parser, sink) || sink.wait_peer_closed());
        if (outcome.index() == 0 && std::get<0>(outcome)) sb->agent->give_back(std::move(sock), generation);
        break;  // answered, or an answer cut short: the client sees 502 only if nothing was sent
    }
    if (!sink.responded()) co_await sink.send(agent_unreachable(req, sb->id));
}

}  // namespace prism_e2b::local::detail
