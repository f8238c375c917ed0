// Terminals (e2b/pty.hpp): process.Process/Start with a pty, SendInput's
// input.pty, Update's pty.size, and the completion-token entry points.
// The request bodies extend protojson's Start and selector messages.
#include <prism_e2b/e2b/pty.hpp>

#include "protocol/base64.hpp"
#include "wire/client_impl.hpp"
#include "wire/launch.hpp"
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

asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> client_impl::start_pty(e2b::envd_target target,
                                                                                           e2b::pty_start_params params)
{
    if (auto ok = check_size(params.size, "process.Start"); !ok) co_return ok.error();
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

}  // namespace prism_e2b::wire

namespace prism_e2b::e2b::detail {

using wire::launch;

void start_pty(client& c, envd_target target, pty_start_params params,
               asio::any_completion_handler<void(result<pty_stream>)> handler)
{
    launch<pty_stream>(c, "process.Start", std::move(handler),
                       [t = std::move(target), p = std::move(params)](wire::client_impl& impl) mutable {
                           return impl.start_pty(std::move(t), std::move(p));
                       });
}

void send_pty_input(client& c, envd_target target, process_selector selector, std::string bytes,
                    asio::any_completion_handler<void(result<void>)> handler)
{
    launch<void>(
        c, "process.SendInput", std::move(handler),
        [t = std::move(target), s = std::move(selector), b = std::move(bytes)](wire::client_impl& impl) mutable {
            return impl.send_pty_input(std::move(t), std::move(s), std::move(b));
        });
}

void resize_pty(client& c, envd_target target, process_selector selector, pty_size size,
                asio::any_completion_handler<void(result<void>)> handler)
{
    launch<void>(c, "process.Update", std::move(handler),
                 [t = std::move(target), s = std::move(selector), size](wire::client_impl& impl) mutable {
                     return impl.resize_pty(std::move(t), std::move(s), size);
                 });
}

void kill_pty(client& c, envd_target target, process_selector selector,
              asio::any_completion_handler<void(result<void>)> handler)
{
    launch<void>(c, "process.SendSignal", std::move(handler),
                 [t = std::move(target), s = std::move(selector)](wire::client_impl& impl) mutable {
                     return impl.send_signal(std::move(t), std::move(s), process_signal::sigkill);
                 });
}

void connect_pty(client& c, envd_target target, process_selector selector,
                 asio::any_completion_handler<void(result<pty_stream>)> handler)
{
    launch<pty_stream>(c, "process.Connect", std::move(handler),
                       [t = std::move(target), s = std::move(selector)](wire::client_impl& impl) mutable {
                           return impl.connect_process(std::move(t), std::move(s), std::chrono::milliseconds(0));
                       });
}

}  // namespace prism_e2b::e2b::detail
