// Terminals in a sandbox: envd's process.Process with a pseudo-terminal
// (process.proto's PTY), as the official SDK's `sandbox.pty`. Start a shell on
// a pty of a given size, write keystrokes to it, resize it, kill it or
// re-attach to it. Every call completes with void(result<T>) on any
// completion token (co_await yields result<T>).
#ifndef PRISM_E2B_E2B_PTY_HPP
#define PRISM_E2B_E2B_PTY_HPP

#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace prism_e2b::e2b {

/// A terminal's size in character cells (process.PTY.Size); envd accepts 1..1000.
struct pty_size {
    std::uint32_t cols = 80;  ///< columns
    std::uint32_t rows = 24;  ///< rows
};

/// process.Process/Start with a pty.
struct pty_start_params {
    /// What runs on the terminal; the official SDK's default is a login shell.
    process_config process{"/bin/bash", {"-i", "-l"}, {}, std::nullopt};
    pty_size size;                    ///< the terminal's initial size
    std::optional<std::string> tag;   ///< a tag to find the process by later
    std::optional<std::string> user;  ///< Authorization: Basic base64("user:")
    /// Connect-Timeout-Ms; 0 (the default) sends none: a terminal lives as long as its shell.
    std::chrono::milliseconds timeout{0};
};

/// The stream of a terminal's events: data_event with stream_kind::pty, then end_event.
using pty_stream = std::unique_ptr<process_event_stream>;

namespace detail {
/// The compiled operations behind the templates below.
/// start, input and resize need the real client (make_client()); another
/// client completes them with errc::unsupported.
PRISM_E2B_API void start_pty(client& c, envd_target target, pty_start_params params,
                             boost::asio::any_completion_handler<void(result<pty_stream>)> handler);
PRISM_E2B_API void send_pty_input(client& c, envd_target target, process_selector selector, std::string bytes,
                                  boost::asio::any_completion_handler<void(result<void>)> handler);
PRISM_E2B_API void resize_pty(client& c, envd_target target, process_selector selector, pty_size size,
                              boost::asio::any_completion_handler<void(result<void>)> handler);
PRISM_E2B_API void kill_pty(client& c, envd_target target, process_selector selector,
                            boost::asio::any_completion_handler<void(result<void>)> handler);
PRISM_E2B_API void connect_pty(client& c, envd_target target, process_selector selector,
                               boost::asio::any_completion_handler<void(result<pty_stream>)> handler);
}  // namespace detail

/// Starts `params.process` on a new pty; the stream's first event carries its pid.
/// `c` must outlive the operation.
template <class CompletionToken = boost::asio::use_awaitable_t<>>
auto async_start_pty(client& c, envd_target target, pty_start_params params, CompletionToken&& token = {})
{
    return boost::asio::async_initiate<CompletionToken, void(result<pty_stream>)>(
        [](auto handler, client* cl, envd_target t, pty_start_params p) {
            detail::start_pty(*cl, std::move(t), std::move(p), std::move(handler));
        },
        token, &c, std::move(target), std::move(params));
}

/// Writes `bytes` to the terminal (process.Process/SendInput, input.pty): keystrokes, as typed.
template <class CompletionToken = boost::asio::use_awaitable_t<>>
auto async_send_pty_input(client& c, envd_target target, process_selector selector, std::string bytes,
                          CompletionToken&& token = {})
{
    return boost::asio::async_initiate<CompletionToken, void(result<void>)>(
        [](auto handler, client* cl, envd_target t, process_selector s, std::string b) {
            detail::send_pty_input(*cl, std::move(t), std::move(s), std::move(b), std::move(handler));
        },
        token, &c, std::move(target), std::move(selector), std::move(bytes));
}

/// Resizes the terminal (process.Process/Update); the shell receives SIGWINCH.
template <class CompletionToken = boost::asio::use_awaitable_t<>>
auto async_resize_pty(client& c, envd_target target, process_selector selector, pty_size size,
                      CompletionToken&& token = {})
{
    return boost::asio::async_initiate<CompletionToken, void(result<void>)>(
        [](auto handler, client* cl, envd_target t, process_selector s, pty_size z) {
            detail::resize_pty(*cl, std::move(t), std::move(s), z, std::move(handler));
        },
        token, &c, std::move(target), std::move(selector), size);
}

/// Kills the terminal's process (SIGKILL); errc::not_found when it is gone.
template <class CompletionToken = boost::asio::use_awaitable_t<>>
auto async_kill_pty(client& c, envd_target target, process_selector selector, CompletionToken&& token = {})
{
    return boost::asio::async_initiate<CompletionToken, void(result<void>)>(
        [](auto handler, client* cl, envd_target t, process_selector s) {
            detail::kill_pty(*cl, std::move(t), std::move(s), std::move(handler));
        },
        token, &c, std::move(target), std::move(selector));
}

/// Re-attaches to a running terminal (process.Process/Connect, no deadline);
/// its output streams from that point on.
template <class CompletionToken = boost::asio::use_awaitable_t<>>
auto async_connect_pty(client& c, envd_target target, process_selector selector, CompletionToken&& token = {})
{
    return boost::asio::async_initiate<CompletionToken, void(result<pty_stream>)>(
        [](auto handler, client* cl, envd_target t, process_selector s) {
            detail::connect_pty(*cl, std::move(t), std::move(s), std::move(handler));
        },
        token, &c, std::move(target), std::move(selector));
}

}  // namespace prism_e2b::e2b

#endif
