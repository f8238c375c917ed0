// Terminals (e2b/pty.hpp): process.Process/Start with a pty, SendInput's
// input.pty and Update's pty.size.
// The request bodies extend protojson's Start and selector messages.
#include "core/spawn_op.hpp"
#include "protocol/base64.hpp"
#include "wire/client_impl.hpp"
#include "wire/protojson.hpp"

#include <boost/json.hpp>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::wire {
namespace {

json::object size_message(e2b::pty_size s)
{
    json::object size;
    size["cols"] = s.cols;
    size["rows"] = s.rows;
    json::object pty;
    pty["size"] = std::move(size);
    return pty;
}

/// envd refuses sizes outside 1..1000; say so before sending.
result<void> check_size(e2b::pty_size s, char const* op)
{
    if (s.cols == 0 || s.rows == 0 || s.cols > 1000 || s.rows > 1000)
        return error(errc::invalid_argument, "a pty needs 1..1000 columns and rows", {op, 0, {}});
    return {};
}

/// protojson's selector message as an object, to add fields to.
result<json::object> selector_object(e2b::process_selector const& s)
{
    auto body = protojson::selector_request(s);
    if (!body) return body.error();
    return json::parse(*body).as_object();
}

}  // namespace

asio::awaitable<result<e2b::pty_stream>> client_impl::start_pty(e2b::envd_target target, e2b::pty_start_params params)
{
    if (auto ok = check_size(params.size, "process.Start"); !ok) return refused<e2b::pty_stream>(ok.error());
    return when_opening<e2b::pty_stream>([this, target = std::move(target), params = std::move(params)]() mutable {
        return start_pty_now(std::move(target), std::move(params));
    });
}

asio::awaitable<result<e2b::pty_stream>> client_impl::start_pty_now(e2b::envd_target target,
                                                                    e2b::pty_start_params params)
{
    e2b::start_process_params start;
    start.process = params.process;
    start.tag = params.tag;
    start.stdin = false;  // a pty's input goes through input.pty
    auto o = json::parse(protojson::start_request(start)).as_object();
    o["pty"] = size_message(params.size);
    std::string rpc = "process.Process/Start";  // named: g++ 12 and temporaries inside co_await
    std::string body = json::serialize(o);
    co_return co_await open_process_stream(std::move(rpc), std::move(target), std::move(body), params.timeout,
                                           params.user);
}

asio::awaitable<result<void>> client_impl::send_pty_input(e2b::envd_target target, e2b::process_selector selector,
                                                          std::string bytes)
{
    auto o = selector_object(selector);
    if (!o) co_return o.error();
    json::object input;
    input["pty"] = detail::base64_encode(bytes);
    (*o)["input"] = std::move(input);
    std::string rpc = "process.Process/SendInput";
    std::string body = json::serialize(*o);
    auto r = co_await envd_unary(std::move(rpc), std::move(target), std::move(body), false);
    if (!r) co_return r.error();
    co_return result<void>{};
}

asio::awaitable<result<void>> client_impl::resize_pty(e2b::envd_target target, e2b::process_selector selector,
                                                      e2b::pty_size size)
{
    if (auto ok = check_size(size, "process.Update"); !ok) co_return ok.error();
    auto o = selector_object(selector);
    if (!o) co_return o.error();
    (*o)["pty"] = size_message(size);
    // Idempotent: the same size twice is the same terminal.
    std::string rpc = "process.Process/Update";
    std::string body = json::serialize(*o);
    auto r = co_await envd_unary(std::move(rpc), std::move(target), std::move(body), true);
    if (!r) co_return r.error();
    co_return result<void>{};
}

void client_impl::do_start_pty(e2b::envd_target target, e2b::pty_start_params params,
                               completion_handler<e2b::pty_stream> h)
{
    prism_e2b::detail::spawn_op(get_executor(), start_pty(std::move(target), std::move(params)), std::move(h));
}

void client_impl::do_send_pty_input(e2b::envd_target target, e2b::process_selector selector, std::string bytes,
                                    completion_handler<void> h)
{
    prism_e2b::detail::spawn_op(get_executor(),
                                send_pty_input(std::move(target), std::move(selector), std::move(bytes)), std::move(h));
}

void client_impl::do_resize_pty(e2b::envd_target target, e2b::process_selector selector, e2b::pty_size size,
                                completion_handler<void> h)
{
    prism_e2b::detail::spawn_op(get_executor(), resize_pty(std::move(target), std::move(selector), size), std::move(h));
}

}  // namespace prism_e2b::wire
