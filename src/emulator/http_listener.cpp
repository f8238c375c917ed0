// Beast-based HTTP/1.1 server: keep-alive sessions, chunked request bodies,
// per-route body limits, chunked streaming responses and Server-Timing.
#include "emulator/http_listener.hpp"

#include "emulator/request_reader.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <mutex>
#include <set>
#include <sys/socket.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);

std::string url_decode(std::string_view s, bool plus_is_space)
{
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
            i += 2;
        } else if (plus_is_space && s[i] == '+') {
            out.push_back(' ');
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

namespace {

std::string server_timing(std::chrono::steady_clock::time_point since)
{
    auto const us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - since).count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "app;dur=%.3f", static_cast<double>(us) / 1000.0);
    return buf;
}

class beast_sink final : public response_sink {
public:
    beast_sink(beast::tcp_stream& stream, http_request const& req, bool keep_alive, unsigned version)
        : stream_(stream), received_(req.received), keep_alive_(keep_alive), version_(version)
    {
    }

    asio::awaitable<bool> send(http_response r) override
    {
        if (responded_ || broken_) co_return false;
        responded_ = true;
        http::response<http::string_body> res{static_cast<http::status>(r.status), version_};
        res.set(http::field::server, "prism-e2b-local");
        if (!r.content_type.empty() && !(r.body.empty() && r.status == 204))
            res.set(http::field::content_type, r.content_type);
        for (auto& [n, v] : r.headers) res.insert(n, v);
        res.set("Server-Timing", server_timing(received_));
        res.keep_alive(keep_alive_);
        res.body() = std::move(r.body);
        res.prepare_payload();
        stream_.expires_after(std::chrono::seconds(60));
        auto [ec, n] = co_await http::async_write(stream_, res, use_nothrow);
        if (ec) {
            broken_ = true;
            co_return false;
        }
        co_return true;
    }

    asio::awaitable<bool> begin_stream(int status, std::string content_type, header_list headers) override
    {
        if (responded_ || broken_) co_return false;
        responded_ = true;
        streaming_ = true;
        http::response<http::empty_body> res{static_cast<http::status>(status), version_};
        res.set(http::field::server, "prism-e2b-local");
        res.set(http::field::content_type, content_type);
        for (auto& [n, v] : headers) res.insert(n, v);
        res.set("Server-Timing", server_timing(received_));
        res.keep_alive(keep_alive_);
        res.chunked(true);
        http::response_serializer<http::empty_body> sr{res};
        stream_.expires_after(std::chrono::seconds(60));
        auto [ec, n] = co_await http::async_write_header(stream_, sr, use_nothrow);
        if (ec) {
            broken_ = true;
            co_return false;
        }
        co_return true;
    }

    asio::awaitable<bool> write_chunk(std::string data) override
    {
        if (!streaming_ || broken_) co_return false;
        if (data.empty()) co_return true;
        stream_.expires_after(std::chrono::seconds(60));
        auto [ec, n] = co_await asio::async_write(stream_, http::make_chunk(asio::buffer(data)), use_nothrow);
        if (ec) {
            broken_ = true;
            co_return false;
        }
        co_return true;
    }

    asio::awaitable<bool> finish_stream() override
    {
        if (!streaming_ || broken_) co_return false;
        streaming_ = false;
        stream_.expires_after(std::chrono::seconds(60));
        auto [ec, n] = co_await asio::async_write(stream_, http::make_chunk_last(), use_nothrow);
        if (ec) {
            broken_ = true;
            co_return false;
        }
        co_return true;
    }

    void abort() override
    {
        broken_ = true;
        beast::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
        stream_.socket().close(ec);
    }

    bool responded() const noexcept override { return responded_; }

    asio::awaitable<void> wait_peer_closed() override
    {
        // A waiting HTTP/1.1 client sends nothing, so readable means closed (or pipelined data, which we leave alone).
        for (;;) {
            auto [ec] = co_await stream_.socket().async_wait(tcp::socket::wait_read, use_nothrow);
            if (ec == asio::error::operation_aborted) co_return;  // cancelled: the stream ended first
            char c;
            ssize_t const n = ::recv(stream_.socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
            if (ec || n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
                broken_ = true;
                co_return;
            }
            if (n > 0) {
                asio::steady_timer forever(co_await asio::this_coro::executor,
                                           std::chrono::steady_clock::time_point::max());
                co_await forever.async_wait(use_nothrow);  // pipelined request: nothing to watch
                co_return;
            }
        }
    }
    bool broken() const noexcept { return broken_ || streaming_; }

private:
    beast::tcp_stream& stream_;
    std::chrono::steady_clock::time_point received_;
    bool keep_alive_;
    unsigned version_;
    bool responded_ = false;
    bool streaming_ = false;
    bool broken_ = false;
};

}  // namespace

struct http_listener::impl : std::enable_shared_from_this<impl> {
    asio::any_io_executor ex_;
    request_handler handler_;
    body_limit_fn limits_;
    log_sink logger_;
    tcp::acceptor acceptor_;
    std::mutex mutex_;
    std::set<std::shared_ptr<beast::tcp_stream>> sessions_;
    bool stopped_ = false;

    impl(asio::any_io_executor ex, request_handler h, body_limit_fn l, log_sink logger)
        : ex_(ex),
          handler_(std::move(h)),
          limits_(std::move(l)),
          logger_(std::move(logger)),
          acceptor_(asio::make_strand(ex))
    {
    }

    asio::awaitable<void> accept_loop()
    {
        auto self = shared_from_this();
        for (;;) {
            auto [ec, sock] = co_await acceptor_.async_accept(asio::make_strand(ex_), use_nothrow);
            if (ec) {
                if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
                continue;  // e.g. EMFILE: keep serving
            }
            beast::error_code ignored;
            sock.set_option(tcp::no_delay(true), ignored);
            auto stream = std::make_shared<beast::tcp_stream>(std::move(sock));
            {
                std::lock_guard lk(mutex_);
                if (stopped_) {
                    stream->socket().close(ignored);
                    co_return;
                }
                sessions_.insert(stream);
            }
            auto exec = stream->get_executor();
            asio::co_spawn(exec, session(stream), asio::detached);
        }
    }

    asio::awaitable<void> answer_plain(beast::tcp_stream& stream, http::status st, std::string msg)
    {
        http::response<http::string_body> res{st, 11};
        res.set(http::field::content_type, "application/json");
        res.set("Server-Timing", "app;dur=0");
        res.keep_alive(false);
        res.body() = "{\"code\":" + std::to_string(static_cast<int>(st)) + ",\"message\":\"" + msg + "\"}";
        res.prepare_payload();
        stream.expires_after(std::chrono::seconds(10));
        co_await http::async_write(stream, res, use_nothrow);
    }

    /// After refusing a request early, keep reading (and dropping) what the client
    /// still sends for a while, so it can finish writing and read the answer.
    asio::awaitable<void> linger(beast::tcp_stream& stream)
    {
        beast::error_code ec;
        stream.socket().shutdown(tcp::socket::shutdown_send, ec);
        std::array<char, 64 * 1024> sink;
        std::size_t total = 0;
        auto const until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (total < (256u << 20) && std::chrono::steady_clock::now() < until) {
            stream.expires_at(until);
            auto [rec, n] = co_await stream.async_read_some(asio::buffer(sink), use_nothrow);
            if (rec) break;
            total += n;
        }
    }

    asio::awaitable<void> session(std::shared_ptr<beast::tcp_stream> stream)
    {
        auto self = shared_from_this();
        beast::flat_buffer buffer;
        try {
            for (;;) {
                http::request_parser<http::string_body> parser;
                parser.header_limit(request_header_limit);
                parser.body_limit(boost::none);                  // the route's limit is applied once the head is known
                stream->expires_after(std::chrono::minutes(5));  // keep-alive idle limit
                auto [ec, n] = co_await http::async_read_header(*stream, buffer, parser, use_nothrow);
                if (ec) {
                    if (ec == http::error::header_limit || ec == http::error::bad_target ||
                        ec == http::error::bad_method || ec == http::error::bad_version ||
                        ec == http::error::bad_field || ec == http::error::bad_value)
                        co_await answer_plain(*stream, http::status::bad_request, "malformed request");
                    break;
                }
                auto const& head = parser.get();
                std::string const path = request_path(head.target());
                std::size_t const limit =
                    limits_ ? limits_(std::string_view(head.method_string().data(), head.method_string().size()), path)
                            : (1u << 20);
                // Content-Length beyond the limit: answer before reading the body.
                if (auto const len = parser.content_length(); len && *len > limit) {
                    co_await answer_plain(*stream, http::status::payload_too_large, "request body too large");
                    co_await linger(*stream);
                    break;
                }
                parser.body_limit(limit);  // enforced while a chunked body arrives
                if (beast::iequals(head[http::field::expect], "100-continue")) {
                    static constexpr std::string_view cont = "HTTP/1.1 100 Continue\r\n\r\n";
                    co_await asio::async_write(*stream, asio::buffer(cont), use_nothrow);
                }
                auto [ec2, n2] = co_await http::async_read(*stream, buffer, parser, use_nothrow);
                if (ec2) {
                    if (ec2 == http::error::body_limit) {
                        co_await answer_plain(*stream, http::status::payload_too_large, "request body too large");
                        co_await linger(*stream);
                    } else if (ec2 != http::error::end_of_stream && ec2 != asio::error::eof &&
                               ec2 != asio::error::operation_aborted && ec2 != beast::error::timeout &&
                               ec2 != asio::error::connection_reset)
                        co_await answer_plain(*stream, http::status::bad_request, "malformed request");
                    break;
                }
                auto msg = parser.release();
                bool const keep_alive = msg.keep_alive();
                unsigned const version = msg.version();
                http_request req = make_http_request(std::move(msg));
                beast_sink sink(*stream, req, keep_alive, version);
                stream->expires_never();
                try {
                    co_await handler_(std::move(req), sink);
                } catch (std::exception const& e) {
                    log_redacted(logger_, log_level::error,
                                 std::string("prism-e2b-local: handler failed: ") + e.what());
                    if (sink.responded()) {
                        sink.abort();
                        break;
                    }
                }
                if (!sink.responded()) {
                    http_response r;
                    r.status = 500;
                    r.body = R"({"code":500,"message":"internal error"})";
                    co_await sink.send(std::move(r));
                }
                if (sink.broken() || !keep_alive) break;
            }
        } catch (std::exception const& e) {
            log_redacted(logger_, log_level::warning, std::string("prism-e2b-local: session error: ") + e.what());
        }
        beast::error_code ec;
        stream->socket().shutdown(tcp::socket::shutdown_send, ec);
        stream->socket().close(ec);
        std::lock_guard lk(mutex_);
        sessions_.erase(stream);
    }
};

http_listener::http_listener(asio::any_io_executor ex, request_handler handler, body_limit_fn limits, log_sink logger)
    : impl_(std::make_shared<impl>(ex, std::move(handler), std::move(limits), std::move(logger)))
{
}

http_listener::~http_listener() { stop(); }

result<std::uint16_t> http_listener::start(std::string const& address, std::uint16_t port)
{
    beast::error_code ec;
    auto addr = asio::ip::make_address(address, ec);
    if (ec) return error(errc::invalid_argument, "listen address is not an IP address", {"listen"});
    tcp::endpoint ep(addr, port);
    auto& a = impl_->acceptor_;
    a.open(ep.protocol(), ec);
    if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) a.bind(ep, ec);
    if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return error(ec, "cannot listen on " + address + ":" + std::to_string(port), {"listen"});
    auto const bound = a.local_endpoint(ec).port();
    asio::co_spawn(a.get_executor(), impl_->accept_loop(), asio::detached);
    return bound;
}

void http_listener::stop()
{
    auto i = impl_;
    std::set<std::shared_ptr<beast::tcp_stream>> sessions;
    {
        std::lock_guard lk(i->mutex_);
        if (i->stopped_) return;
        i->stopped_ = true;
        sessions = i->sessions_;
    }
    asio::post(i->acceptor_.get_executor(), [i] {
        beast::error_code ec;
        i->acceptor_.close(ec);
    });
    for (auto const& s : sessions) {
        asio::post(s->get_executor(), [s] {
            beast::error_code ec;
            s->socket().shutdown(tcp::socket::shutdown_both, ec);
            s->socket().close(ec);
        });
    }
}

}  // namespace prism_e2b::local::detail
