// Forwarding proxy with Server-Timing capture (Beast; one coroutine per
// downstream connection, each with its own upstream keep-alive connection).
#include "timing_proxy.hpp"

#include "stats.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cstdlib>
#include <mutex>
#include <thread>

namespace prism_e2b::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

double parse_server_timing(std::string const& value)
{
    // "app;dur=1.234" possibly among other metrics separated by commas.
    std::size_t pos = 0;
    while (pos < value.size()) {
        auto const end = std::min(value.find(',', pos), value.size());
        std::string metric = value.substr(pos, end - pos);
        auto const first = metric.find_first_not_of(' ');
        metric = first == std::string::npos ? "" : metric.substr(first);
        if (metric.rfind("app", 0) == 0 && (metric.size() == 3 || metric[3] == ';')) {
            auto const d = metric.find("dur=");
            if (d != std::string::npos) return std::strtod(metric.c_str() + d + 4, nullptr);
        }
        pos = end + 1;
    }
    return -1;
}

struct timing_proxy::impl : std::enable_shared_from_this<impl> {
    asio::io_context ioc{1};
    tcp::acceptor acceptor{ioc};
    int upstream_port = 0;
    std::thread thread;
    std::mutex mutex;
    std::vector<timed_exchange> records;

    asio::awaitable<void> accept_loop()
    {
        for (;;) {
            auto [ec, sock] = co_await acceptor.async_accept(use_tuple);
            if (ec) co_return;
            sock.set_option(tcp::no_delay(true));
            asio::co_spawn(ioc, serve(shared_from_this(), std::move(sock)), asio::detached);
        }
    }

    static asio::awaitable<void> serve(std::shared_ptr<impl> self, tcp::socket down)
    {
        tcp::socket up(self->ioc);
        auto [cec] = co_await up.async_connect(
            tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(self->upstream_port)),
            use_tuple);
        if (cec) co_return;
        up.set_option(tcp::no_delay(true));
        beast::flat_buffer dbuf, ubuf;
        for (;;) {
            http::request<http::string_body> req;
            auto [rec, rn] = co_await http::async_read(down, dbuf, req, use_tuple);
            if (rec) co_return;
            auto const t0 = std::chrono::steady_clock::now();
            auto [wec, wn] = co_await http::async_write(up, req, use_tuple);
            if (wec) co_return;
            http::response_parser<http::string_body> parser;
            parser.body_limit(256u << 20);
            auto [uec, un] = co_await http::async_read(up, ubuf, parser, use_tuple);
            if (uec) co_return;
            auto res = parser.release();
            timed_exchange x;
            x.upstream_ms = to_ms(std::chrono::steady_clock::now() - t0);
            x.method = std::string(req.method_string());
            x.target = std::string(req.target());
            x.status = static_cast<int>(res.result_int());
            if (auto it = res.find("Server-Timing"); it != res.end())
                x.server_ms = parse_server_timing(std::string(it->value()));
            {
                std::lock_guard lock(self->mutex);
                self->records.push_back(std::move(x));
            }
            bool const keep = res.keep_alive() && req.keep_alive();
            auto [dec, dn] = co_await http::async_write(down, res, use_tuple);
            if (dec || !keep) co_return;
        }
    }
};

timing_proxy::timing_proxy() : impl_(std::make_shared<impl>()) {}

timing_proxy::~timing_proxy()
{
    impl_->ioc.stop();
    if (impl_->thread.joinable()) impl_->thread.join();
}

std::string timing_proxy::start(int upstream_port)
{
    impl_->upstream_port = upstream_port;
    boost::system::error_code ec;
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
    impl_->acceptor.open(ep.protocol(), ec);
    if (!ec) impl_->acceptor.bind(ep, ec);
    if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return "timing proxy: " + ec.message();
    asio::co_spawn(impl_->ioc, impl_->accept_loop(), asio::detached);
    impl_->thread = std::thread([p = impl_] { p->ioc.run(); });
    return {};
}

std::string timing_proxy::url() const
{
    return "http://127.0.0.1:" + std::to_string(impl_->acceptor.local_endpoint().port());
}

std::vector<timed_exchange> timing_proxy::take()
{
    std::lock_guard lock(impl_->mutex);
    return std::exchange(impl_->records, {});
}

}  // namespace prism_e2b::bench
