// Implementation of the in-test HTTP server (see test_http_server.hpp).
#include "test_http_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>
#include <thread>

namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace ssl = asio::ssl;
using asio::ip::tcp;

namespace prism_e2b::test {
namespace {

bool iequal(std::string const& a, std::string const& b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

std::string reason(int status) { return std::string(http::obsolete_reason(static_cast<http::status>(status))); }

std::string format_head(scripted_response const& r, bool chunked)
{
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
    for (auto const& [k, v] : r.headers) out += k + ": " + v + "\r\n";
    if (chunked)
        out += "Transfer-Encoding: chunked\r\n";
    else
        out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
    if (r.close) out += "Connection: close\r\n";
    out += "\r\n";
    return out;
}

std::string hex(std::size_t n)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%zx", n);
    return buf;
}

}  // namespace

std::optional<std::string> recorded_request::header(std::string const& name) const
{
    for (auto const& [k, v] : headers)
        if (iequal(k, name)) return v;
    return std::nullopt;
}

std::size_t recorded_request::header_count(std::string const& name) const
{
    return static_cast<std::size_t>(
        std::count_if(headers.begin(), headers.end(), [&](auto const& kv) { return iequal(kv.first, name); }));
}

std::string envelope_bytes(std::string const& json, unsigned char flags)
{
    std::string out;
    auto n = static_cast<std::uint32_t>(json.size());
    out.push_back(static_cast<char>(flags));
    out.push_back(static_cast<char>((n >> 24) & 0xff));
    out.push_back(static_cast<char>((n >> 16) & 0xff));
    out.push_back(static_cast<char>((n >> 8) & 0xff));
    out.push_back(static_cast<char>(n & 0xff));
    return out + json;
}

struct test_http_server::impl {
    explicit impl(request_handler h, options o)
        : handler(std::move(h)), opts(std::move(o)), ioc(opts.threads), ctx(ssl::context::tls_server), acceptor(ioc)
    {
        if (opts.tls) {
            ctx.use_certificate_chain_file(opts.cert_chain_file);
            ctx.use_private_key_file(opts.key_file, ssl::context::pem);
            SSL_CTX_set_tlsext_servername_callback(ctx.native_handle(), &impl::on_sni);
            SSL_CTX_set_tlsext_servername_arg(ctx.native_handle(), this);
        }
        tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
        acceptor.open(ep.protocol());
        acceptor.set_option(tcp::acceptor::reuse_address(true));
        acceptor.bind(ep);
        acceptor.listen(4096);
        port = acceptor.local_endpoint().port();
        asio::co_spawn(ioc, accept_loop(), asio::detached);
        for (int i = 0; i < opts.threads; ++i) threads.emplace_back([this] { ioc.run(); });
    }

    static int on_sni(SSL* ssl, int*, void* arg)
    {
        auto* self = static_cast<impl*>(arg);
        char const* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        std::lock_guard lock(self->mutex);
        self->sni.emplace_back(name ? name : "");
        return SSL_TLSEXT_ERR_OK;
    }

    ~impl()
    {
        ioc.stop();
        for (auto& t : threads) t.join();
    }

    asio::awaitable<void> accept_loop()
    {
        for (;;) {
            auto [ec, sock] =
                co_await acceptor.async_accept(asio::make_strand(ioc), asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;
            std::size_t const id = ++accepted;
            auto now_open = ++open;
            std::size_t prev = max_open.load();
            while (now_open > prev && !max_open.compare_exchange_weak(prev, now_open)) {
            }
            if (opts.tls) {
                auto s = std::make_shared<ssl::stream<tcp::socket>>(std::move(sock), ctx);
                asio::co_spawn(s->get_executor(), tls_session(s, id), asio::detached);
            } else {
                auto s = std::make_shared<tcp::socket>(std::move(sock));
                asio::co_spawn(s->get_executor(), session(s, id), asio::detached);
            }
        }
    }

    asio::awaitable<void> tls_session(std::shared_ptr<ssl::stream<tcp::socket>> s, std::size_t id)
    {
        auto [ec] = co_await s->async_handshake(ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
        if (ec) {
            ++failed_handshakes;
            --open;
            co_return;
        }
        co_await session(s, id);
    }

    template <class Stream>
    asio::awaitable<void> session(std::shared_ptr<Stream> s, std::size_t id)
    {
        boost::beast::flat_buffer buffer;
        for (;;) {
            http::request_parser<http::string_body> p;
            p.body_limit(512u << 20);
            auto [ec, n] = co_await http::async_read(*s, buffer, p, asio::as_tuple(asio::use_awaitable));
            if (ec) break;
            auto& msg = p.get();
            recorded_request rec;
            rec.method = std::string(msg.method_string());
            rec.target = std::string(msg.target());
            for (auto const& f : msg) rec.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
            rec.body = msg.body();
            rec.connection = id;
            request_handler h;
            {
                std::lock_guard lock(mutex);
                recorded.push_back(rec);
                h = handler;
            }
            auto resp = h(rec);
            bool keep = !resp.close && !resp.cut && msg.keep_alive() && !resp.raw;
            if (!co_await respond(*s, resp)) break;
            if (!keep) break;
        }
        boost::system::error_code ignored;
        lowest(*s).shutdown(tcp::socket::shutdown_both, ignored);
        lowest(*s).close(ignored);
        --open;
    }

    static tcp::socket& lowest(tcp::socket& s) { return s; }
    static tcp::socket& lowest(ssl::stream<tcp::socket>& s) { return s.next_layer(); }

    template <class Stream>
    asio::awaitable<bool> write(Stream& s, std::string data)
    {
        auto [ec, n] = co_await asio::async_write(s, asio::buffer(data), asio::as_tuple(asio::use_awaitable));
        co_return !ec;
    }

    template <class Stream>
    asio::awaitable<bool> respond(Stream& s, scripted_response const& r)
    {
        if (r.raw) co_return co_await write(s, *r.raw);
        bool const chunked = !r.chunks.empty() || r.cut;
        if (!chunked) co_return co_await write(s, format_head(r, false) + r.body);
        if (!co_await write(s, format_head(r, true))) co_return false;
        asio::steady_timer timer(s.get_executor());
        for (auto const& c : r.chunks) {
            if (r.chunk_delay.count() > 0) {
                timer.expires_after(r.chunk_delay);
                co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
            }
            if (c.empty()) continue;
            if (!co_await write(s, hex(c.size()) + "\r\n" + c + "\r\n")) co_return false;
        }
        if (r.cut) co_return false;
        co_return co_await write(s, "0\r\n\r\n");
    }

    request_handler handler;
    options opts;
    asio::io_context ioc;
    ssl::context ctx;
    tcp::acceptor acceptor;
    unsigned short port = 0;
    std::vector<std::thread> threads;
    mutable std::mutex mutex;
    std::vector<recorded_request> recorded;
    std::vector<std::string> sni;
    std::atomic<std::size_t> accepted{0}, open{0}, max_open{0}, failed_handshakes{0};
};

test_http_server::test_http_server(request_handler handler) : test_http_server(std::move(handler), options{}) {}

test_http_server::test_http_server(request_handler handler, options opts)
    : impl_(std::make_unique<impl>(std::move(handler), std::move(opts)))
{
}

test_http_server::~test_http_server() = default;

unsigned short test_http_server::port() const { return impl_->port; }

std::string test_http_server::url() const { return url("127.0.0.1"); }

std::string test_http_server::url(std::string const& host) const
{
    return std::string(impl_->opts.tls ? "https://" : "http://") + host + ":" + std::to_string(impl_->port);
}

std::vector<recorded_request> test_http_server::requests() const
{
    std::lock_guard lock(impl_->mutex);
    return impl_->recorded;
}

std::size_t test_http_server::request_count() const
{
    std::lock_guard lock(impl_->mutex);
    return impl_->recorded.size();
}

std::size_t test_http_server::accepted_connections() const { return impl_->accepted.load(); }
std::size_t test_http_server::max_open_connections() const { return impl_->max_open.load(); }
std::size_t test_http_server::failed_handshakes() const { return impl_->failed_handshakes.load(); }

std::vector<std::string> test_http_server::sni_names() const
{
    std::lock_guard lock(impl_->mutex);
    return impl_->sni;
}

void test_http_server::set_handler(request_handler h)
{
    std::lock_guard lock(impl_->mutex);
    impl_->handler = std::move(h);
}

}  // namespace prism_e2b::test
