// The raw Beast keep-alive loop of the unary floor benchmark.
#include "raw_floor.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace prism_e2b::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct raw_envd_connection::impl {
    tcp::socket socket;
    int port;
    std::string sandbox_id;
    std::string access_token;
    beast::flat_buffer buffer;
    bool connected = false;
};

raw_envd_connection::raw_envd_connection(asio::any_io_executor ex, int port, std::string sandbox_id,
                                         std::string access_token)
    : impl_(new impl{tcp::socket(ex), port, std::move(sandbox_id), std::move(access_token), {}, false})
{
}

raw_envd_connection::~raw_envd_connection() = default;

asio::awaitable<std::string> raw_envd_connection::connect()
{
    auto [ec] = co_await impl_->socket.async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(impl_->port)),
        asio::as_tuple(asio::use_awaitable));
    if (ec) co_return "raw connect: " + ec.message();
    impl_->socket.set_option(tcp::no_delay(true));
    impl_->connected = true;
    co_return std::string{};
}

asio::awaitable<std::string> raw_envd_connection::stat(std::string path)
{
    http::request<http::string_body> req{http::verb::post, "/filesystem.Filesystem/Stat", 11};
    req.set(http::field::host, "127.0.0.1:" + std::to_string(impl_->port));
    req.set(http::field::content_type, "application/json");
    req.set("Connect-Protocol-Version", "1");
    req.set("E2b-Sandbox-Id", impl_->sandbox_id);
    req.set("E2b-Sandbox-Port", "49983");
    if (!impl_->access_token.empty()) req.set("X-Access-Token", impl_->access_token);
    req.body() = "{\"path\":\"" + path + "\"}";
    req.prepare_payload();
    req.keep_alive(true);
    auto [wec, wn] = co_await http::async_write(impl_->socket, req, asio::as_tuple(asio::use_awaitable));
    if (wec) co_return "raw write: " + wec.message();
    http::response<http::string_body> res;
    auto [rec, rn] = co_await http::async_read(impl_->socket, impl_->buffer, res, asio::as_tuple(asio::use_awaitable));
    if (rec) co_return "raw read: " + rec.message();
    if (res.result_int() != 200) co_return "raw stat: HTTP " + std::to_string(res.result_int());
    co_return std::string{};
}

}  // namespace prism_e2b::bench
