// The E2B client surface: the injection seam between the adapter and the vendor.
#ifndef PRISM_E2B_E2B_CLIENT_HPP
#define PRISM_E2B_E2B_CLIENT_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/e2b/client_options.hpp>
#include <prism_e2b/e2b/file_transfer.hpp>
#include <prism_e2b/e2b/metrics.hpp>
#include <prism_e2b/e2b/network.hpp>
#include <prism_e2b/e2b/pty.hpp>
#include <prism_e2b/e2b/sandbox_logs.hpp>
#include <prism_e2b/e2b/snapshots.hpp>
#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/e2b/volumes.hpp>
#include <prism_e2b/e2b/watch.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace prism_e2b::e2b {

/// Every E2B call the SDK makes: the control plane (REST) and envd (Connect-RPC
/// and plain HTTP). make_client() returns the real implementation; hosts and
/// tests may inject their own, usually by deriving from coroutine_client.
///
/// Every operation is `async_x(args..., token)` in the universal async model
/// (<prism_e2b/async.hpp>): it completes with `void(result<T>)` on any
/// completion token; the default token makes `co_await c->async_x(...)` yield
/// `result<T>` (never throwing). Each public template forwards to a protected
/// virtual `do_x(args..., completion_handler<T>)` that implementations override.
///
/// Errors: vendor statuses map to errc (401 unauthenticated, 404 not_found, 409
/// conflict, 429 rate_limited after retries, 503 service_busy, other 5xx
/// server_error); transport errors pass through; every message is redacted.
/// The errors an operation adds are in its comment.
///
/// Per-operation cancellation: terminal on every operation (bind a slot to the
/// token); the operation then completes with errc::cancelled. Whether the
/// vendor acted on a mutating request before the cancellation is unknown: each
/// comment says what may have happened.
///
/// Completion: on the handler's associated executor, else the client's
/// (coroutine_client's executor). The errc::unsupported defaults of the
/// optional operations complete through the handler's associated executor.
/// Thread safety: every operation may be started concurrently from any thread.
/// Lifetimes: arguments are copied before the operation starts; the client
/// must outlive its operations (and the streams it returns).
class PRISM_E2B_API client {
public:
    virtual ~client();

    // -- control plane (REST) --------------------------------------------------
    /// POST /sandboxes: starts a sandbox from `params.template_id`.
    /// Errors: errc::not_found (unknown template), errc::rate_limited (429 after retries),
    /// errc::invalid_argument (400). The handle's access token is registered with the redactor.
    /// Cancellation: terminal; a sandbox may have been created (see async_list_sandboxes).
    template <class CompletionToken = default_completion_token>
    auto async_create_sandbox(create_sandbox_params params, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<sandbox_handle>(
            std::forward<CompletionToken>(token),
            [this](create_sandbox_params a0, completion_handler<sandbox_handle> h) {
                do_create_sandbox(std::move(a0), std::move(h));
            },
            std::move(params));
    }
    /// POST /sandboxes/{id}/connect: resumes a paused sandbox or extends a running one's
    /// timeout to `timeout` from now. Errors: errc::not_found (unknown or killed).
    /// Cancellation: terminal; the sandbox may have been resumed.
    template <class CompletionToken = default_completion_token>
    auto async_connect_sandbox(std::string sandbox_id, std::chrono::seconds timeout, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<connect_result>(
            std::forward<CompletionToken>(token),
            [this](std::string a0, std::chrono::seconds a1, completion_handler<connect_result> h) {
                do_connect_sandbox(std::move(a0), a1, std::move(h));
            },
            std::move(sandbox_id), timeout);
    }
    /// POST /sandboxes/{id}/pause; `memory` keeps the processes' memory (else the filesystem
    /// only). 404, 409 and 503 are outcomes in pause_reply, not errors.
    /// Cancellation: terminal; the pause may have happened (look at async_get_sandbox_info).
    template <class CompletionToken = default_completion_token>
    auto async_pause_sandbox(std::string sandbox_id, bool memory, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<pause_reply>(
            std::forward<CompletionToken>(token),
            [this](std::string a0, bool a1, completion_handler<pause_reply> h) {
                do_pause_sandbox(std::move(a0), a1, std::move(h));
            },
            std::move(sandbox_id), memory);
    }
    /// DELETE /sandboxes/{id}: true when killed, false when it was already gone (404).
    /// Cancellation: terminal; the kill may have happened.
    template <class CompletionToken = default_completion_token>
    auto async_kill_sandbox(std::string sandbox_id, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<bool>(
            std::forward<CompletionToken>(token),
            [this](std::string a0, completion_handler<bool> h) { do_kill_sandbox(std::move(a0), std::move(h)); },
            std::move(sandbox_id));
    }
    /// GET /sandboxes/{id}. Errors: errc::not_found. Cancellation: terminal, no side effect.
    template <class CompletionToken = default_completion_token>
    auto async_get_sandbox_info(std::string sandbox_id, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<sandbox_info>(
            std::forward<CompletionToken>(token),
            [this](std::string a0, completion_handler<sandbox_info> h) {
                do_get_sandbox_info(std::move(a0), std::move(h));
            },
            std::move(sandbox_id));
    }
    /// GET /v2/sandboxes: one page (`params.next_token` continues).
    /// Cancellation: terminal, no side effect.
    template <class CompletionToken = default_completion_token>
    auto async_list_sandboxes(list_params params, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<sandbox_page>(
            std::forward<CompletionToken>(token),
            [this](list_params a0, completion_handler<sandbox_page> h) {
                do_list_sandboxes(std::move(a0), std::move(h));
            },
            std::move(params));
    }
    /// POST /sandboxes/{id}/timeout: the sandbox ends `timeout` from now.
    /// Errors: errc::not_found. Cancellation: terminal; the new timeout may be set.
    template <class CompletionToken = default_completion_token>
    auto async_set_sandbox_timeout(std::string sandbox_id, std::chrono::seconds timeout, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](std::string a0, std::chrono::seconds a1, completion_handler<void> h) {
                do_set_sandbox_timeout(std::move(a0), a1, std::move(h));
            },
            std::move(sandbox_id), timeout);
    }
    // -- envd: process.Process -------------------------------------------------
    /// process.Process/Start: runs a process and streams its events (the first is its
    /// start_event with the pid). Errors: errc::unauthenticated (bad access token), errc::not_found,
    /// errc::server_error (502: the sandbox is not running). Cancellation: terminal; the process
    /// may have started (find it with async_list_processes). The stream is independent of the
    /// operation: read it with async_next(), close() it to stop.
    template <class CompletionToken = default_completion_token>
    auto async_start_process(envd_target target, start_process_params params, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::unique_ptr<process_event_stream>>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, start_process_params a1,
                   completion_handler<std::unique_ptr<process_event_stream>> h) {
                do_start_process(std::move(a0), std::move(a1), std::move(h));
            },
            std::move(target), std::move(params));
    }
    /// process.Process/Connect: re-attaches to a running process; its events stream from
    /// that point on. `timeout` 0 sends no deadline. Errors: errc::not_found (gone).
    /// Cancellation: terminal, no side effect on the process.
    template <class CompletionToken = default_completion_token>
    auto async_connect_process(envd_target target, process_selector selector, std::chrono::milliseconds timeout,
                               CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::unique_ptr<process_event_stream>>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, process_selector a1, std::chrono::milliseconds a2,
                   completion_handler<std::unique_ptr<process_event_stream>> h) {
                do_connect_process(std::move(a0), std::move(a1), a2, std::move(h));
            },
            std::move(target), std::move(selector), timeout);
    }
    /// process.Process/List: the running processes. Cancellation: terminal, no side effect.
    template <class CompletionToken = default_completion_token>
    auto async_list_processes(envd_target target, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::vector<process_info>>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, completion_handler<std::vector<process_info>> h) {
                do_list_processes(std::move(a0), std::move(h));
            },
            std::move(target));
    }
    /// process.Process/SendInput: writes `bytes` to the process's stdin (started with
    /// stdin = true). Errors: errc::not_found. Cancellation: terminal; the bytes may have been written.
    template <class CompletionToken = default_completion_token>
    auto async_send_stdin(envd_target target, process_selector selector, std::string bytes,
                          CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, process_selector a1, std::string a2, completion_handler<void> h) {
                do_send_stdin(std::move(a0), std::move(a1), std::move(a2), std::move(h));
            },
            std::move(target), std::move(selector), std::move(bytes));
    }
    /// process.Process/CloseStdin (envd >= 0.5.2; older: errc::unsupported): the process reads
    /// end of file. Errors: errc::not_found. Cancellation: terminal; stdin may be closed.
    template <class CompletionToken = default_completion_token>
    auto async_close_stdin(envd_target target, process_selector selector, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, process_selector a1, completion_handler<void> h) {
                do_close_stdin(std::move(a0), std::move(a1), std::move(h));
            },
            std::move(target), std::move(selector));
    }
    /// process.Process/SendSignal. Errors: errc::not_found. Cancellation: terminal; the
    /// signal may have been sent.
    template <class CompletionToken = default_completion_token>
    auto async_send_signal(envd_target target, process_selector selector, process_signal sig,
                           CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, process_selector a1, process_signal a2, completion_handler<void> h) {
                do_send_signal(std::move(a0), std::move(a1), a2, std::move(h));
            },
            std::move(target), std::move(selector), sig);
    }
    // -- envd: files and filesystem.Filesystem ---------------------------------
    /// GET /files: the file's bytes (bounded by client_options::max_response_bytes).
    /// Errors: errc::not_found, errc::limit_exceeded. Cancellation: terminal, no side effect.
    template <class CompletionToken = default_completion_token>
    auto async_read_file(envd_target target, std::string path, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::string>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, std::string a1, completion_handler<std::string> h) {
                do_read_file(std::move(a0), std::move(a1), std::move(h));
            },
            std::move(target), std::move(path));
    }
    /// POST /files: writes (creates or replaces) the file. Cancellation: terminal; the
    /// file may have been written.
    template <class CompletionToken = default_completion_token>
    auto async_write_file(envd_target target, std::string path, std::string data, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<entry_info>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, std::string a1, std::string a2, completion_handler<entry_info> h) {
                do_write_file(std::move(a0), std::move(a1), std::move(a2), std::move(h));
            },
            std::move(target), std::move(path), std::move(data));
    }
    /// filesystem.Filesystem/MakeDir: true when created, false when it existed already.
    /// Cancellation: terminal; the directory may have been made.
    template <class CompletionToken = default_completion_token>
    auto async_make_dir(envd_target target, std::string path, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<bool>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, std::string a1, completion_handler<bool> h) {
                do_make_dir(std::move(a0), std::move(a1), std::move(h));
            },
            std::move(target), std::move(path));
    }
    /// filesystem.Filesystem/Stat. Errors: errc::not_found. Cancellation: terminal, no side effect.
    template <class CompletionToken = default_completion_token>
    auto async_stat(envd_target target, std::string path, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<entry_info>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, std::string a1, completion_handler<entry_info> h) {
                do_stat(std::move(a0), std::move(a1), std::move(h));
            },
            std::move(target), std::move(path));
    }
    /// filesystem.Filesystem/ListDir, `depth` levels deep. Errors: errc::not_found.
    /// Cancellation: terminal, no side effect.
    template <class CompletionToken = default_completion_token>
    auto async_list_dir(envd_target target, std::string path, std::uint32_t depth, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::vector<entry_info>>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, std::string a1, std::uint32_t a2, completion_handler<std::vector<entry_info>> h) {
                do_list_dir(std::move(a0), std::move(a1), a2, std::move(h));
            },
            std::move(target), std::move(path), depth);
    }
    /// filesystem.Filesystem/Move. Errors: errc::not_found. Cancellation: terminal; the
    /// entry may have moved.
    template <class CompletionToken = default_completion_token>
    auto async_move(envd_target target, std::string source, std::string destination, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<entry_info>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, std::string a1, std::string a2, completion_handler<entry_info> h) {
                do_move(std::move(a0), std::move(a1), std::move(a2), std::move(h));
            },
            std::move(target), std::move(source), std::move(destination));
    }
    /// filesystem.Filesystem/Remove; a missing path is success. Cancellation: terminal;
    /// the entry may be gone.
    template <class CompletionToken = default_completion_token>
    auto async_remove(envd_target target, std::string path, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, std::string a1, completion_handler<void> h) {
                do_remove(std::move(a0), std::move(a1), std::move(h));
            },
            std::move(target), std::move(path));
    }
    /// GET /health: true on 204, false when envd answers 502 (the sandbox is not running).
    /// Cancellation: terminal, no side effect.
    template <class CompletionToken = default_completion_token>
    auto async_health(envd_target target, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<bool>(
            std::forward<CompletionToken>(token),
            [this](envd_target a0, completion_handler<bool> h) { do_health(std::move(a0), std::move(h)); },
            std::move(target));
    }

    // -- envd: terminals (process.Process with a pty, e2b/pty.hpp) ------------
    /// Starts `params.process` on a new pty of `params.size`; the stream's first
    /// event carries its pid, then data_event with stream_kind::pty.
    /// Errors: errc::invalid_argument (a size outside 1..1000), errc::unsupported
    /// (a client that has no terminals; make_client()'s has).
    /// Cancellation: terminal; the terminal may have started.
    template <class CompletionToken = default_completion_token>
    auto async_start_pty(envd_target target, pty_start_params params, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<pty_stream>(
            std::forward<CompletionToken>(token),
            [this](envd_target t, pty_start_params p, completion_handler<pty_stream> h) {
                do_start_pty(std::move(t), std::move(p), std::move(h));
            },
            std::move(target), std::move(params));
    }
    /// Writes `bytes` to the terminal (process.Process/SendInput, input.pty):
    /// keystrokes, as typed. Errors: errc::not_found, errc::unsupported.
    /// Cancellation: terminal; the bytes may have been written.
    template <class CompletionToken = default_completion_token>
    auto async_send_pty_input(envd_target target, process_selector selector, std::string bytes,
                              CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](envd_target t, process_selector s, std::string b, completion_handler<void> h) {
                do_send_pty_input(std::move(t), std::move(s), std::move(b), std::move(h));
            },
            std::move(target), std::move(selector), std::move(bytes));
    }
    /// Resizes the terminal (process.Process/Update); the shell receives SIGWINCH.
    /// Errors: errc::invalid_argument (outside 1..1000), errc::not_found,
    /// errc::unsupported. Cancellation: terminal; the size may have changed.
    template <class CompletionToken = default_completion_token>
    auto async_resize_pty(envd_target target, process_selector selector, pty_size size, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](envd_target t, process_selector s, pty_size z, completion_handler<void> h) {
                do_resize_pty(std::move(t), std::move(s), z, std::move(h));
            },
            std::move(target), std::move(selector), size);
    }
    /// Kills the terminal's process: async_send_signal with SIGKILL.
    /// Errors: errc::not_found when it is gone. Cancellation: as async_send_signal.
    template <class CompletionToken = default_completion_token>
    auto async_kill_pty(envd_target target, process_selector selector, CompletionToken&& token = {})
    {
        return async_send_signal(std::move(target), std::move(selector), process_signal::sigkill,
                                 std::forward<CompletionToken>(token));
    }
    /// Re-attaches to a running terminal: async_connect_process with no deadline;
    /// its output streams from that point on. Errors and cancellation: as
    /// async_connect_process.
    template <class CompletionToken = default_completion_token>
    auto async_connect_pty(envd_target target, process_selector selector, CompletionToken&& token = {})
    {
        return async_connect_process(std::move(target), std::move(selector), std::chrono::milliseconds(0),
                                     std::forward<CompletionToken>(token));
    }

    // -- control plane: metrics (e2b/metrics.hpp) -----------------------------
    /// GET /sandboxes/{id}/metrics: the sandbox's samples, oldest first; an
    /// empty series before the first sample. Errors: errc::not_found,
    /// errc::protocol_error (a malformed reply), errc::unsupported (a client
    /// without metrics; make_client()'s has them). Cancellation: terminal, no side effect.
    template <class CompletionToken = default_completion_token>
    auto async_get_sandbox_metrics(std::string sandbox_id, metrics_params params = {}, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::vector<sandbox_metric>>(
            std::forward<CompletionToken>(token),
            [this](std::string id, metrics_params p, completion_handler<std::vector<sandbox_metric>> h) {
                do_get_sandbox_metrics(std::move(id), p, std::move(h));
            },
            std::move(sandbox_id), params);
    }

    // -- envd: filesystem.Filesystem/WatchDir (e2b/watch.hpp) ------------------
    /// Opens a WatchDir stream on `params.path`: `result<std::unique_ptr<watch_event_stream>>`.
    /// Completes once envd accepted the watch (its start message arrived), so
    /// changes made after completion are reported. Errors: not_found (no such
    /// directory), invalid_argument (not a directory, bad path), the mapped
    /// envd or transport error; errc::unsupported from a client that does not
    /// implement it. Per-operation cancellation: terminal (errc::cancelled).
    template <class CompletionToken = default_completion_token>
    auto async_watch_dir(envd_target target, watch_dir_params params, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::unique_ptr<watch_event_stream>>(
            std::forward<CompletionToken>(token),
            [this](envd_target t, watch_dir_params p, completion_handler<std::unique_ptr<watch_event_stream>> h) {
                do_watch_dir(std::move(t), std::move(p), std::move(h));
            },
            std::move(target), std::move(params));
    }

    // ---- issue 14 item 1 (client14): streamed and batch files, exists, snapshots,
    // logs, network, signed URLs, get_host. Each async_x completes with
    // void(result<T>) on any completion token; the compiled do_x of a client
    // other than make_client()'s answers errc::unsupported unless it overrides it.
    // Arguments are copied before the operation starts; the client must outlive it.

    /// GET /files streamed: the file's bytes reach `sink` chunk by chunk, never
    /// the whole file at once. errc::not_found for a missing file or a sandbox
    /// that is not running; the sink's error stops the transfer with that error.
    template <class CompletionToken = default_completion_token>
    auto async_read_file_stream(envd_target target, std::string path, chunk_sink sink, transfer_options options = {},
                                CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<transfer_summary>(
            token, [this](auto... a) { do_read_file_stream(std::move(a)...); }, std::move(target), std::move(path),
            std::move(sink), std::move(options));
    }
    /// POST /files streamed from `source` (Content-Length: source.size), then
    /// the file's real entry (Stat). errc::invalid_argument for a source whose
    /// read or rewind is empty, or that yields more or fewer bytes than its size.
    template <class CompletionToken = default_completion_token>
    auto async_write_file_stream(envd_target target, std::string path, chunk_source source,
                                 transfer_options options = {}, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<streamed_write>(
            token, [this](auto... a) { do_write_file_stream(std::move(a)...); }, std::move(target), std::move(path),
            std::move(source), std::move(options));
    }
    /// POST /files with several files in one multipart request (the SDK's
    /// files.write([...])); the entries in the order given, each with its real size.
    template <class CompletionToken = default_completion_token>
    auto async_write_files(envd_target target, std::vector<file_write> files, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::vector<entry_info>>(
            token, [this](auto... a) { do_write_files(std::move(a)...); }, std::move(target), std::move(files));
    }
    /// True when `path` exists (file, directory or link), false when not (Stat answered not_found).
    template <class CompletionToken = default_completion_token>
    auto async_exists(envd_target target, std::string path, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<bool>(
            token, [this](auto... a) { do_exists(std::move(a)...); }, std::move(target), std::move(path));
    }
    /// POST /sandboxes/{id}/snapshots: a persistent snapshot of the sandbox's
    /// current state (create_sandbox with its id as template_id starts from it).
    template <class CompletionToken = default_completion_token>
    auto async_create_snapshot(std::string sandbox_id, create_snapshot_params params = {}, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<snapshot_info>(
            token, [this](auto... a) { do_create_snapshot(std::move(a)...); }, std::move(sandbox_id),
            std::move(params));
    }
    /// POST /sandboxes/{id}/fork: the running source is snapshotted once (it runs on) and
    /// `count` sandboxes start from that snapshot; one result per fork, in order: its handle
    /// (access token registered with the redactor) or the error that kept it from starting.
    /// The call's own error: the source is unknown (not_found), paused (conflict), ...
    template <class CompletionToken = default_completion_token>
    auto async_fork_sandbox(std::string sandbox_id, fork_params params = {}, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::vector<result<sandbox_handle>>>(
            token, [this](auto... a) { do_fork_sandbox(std::move(a)...); }, std::move(sandbox_id), std::move(params));
    }
    /// GET /snapshots: one page.
    template <class CompletionToken = default_completion_token>
    auto async_list_snapshots(snapshot_list_params params = {}, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<snapshot_page>(
            token, [this](auto... a) { do_list_snapshots(std::move(a)...); }, std::move(params));
    }
    /// DELETE /templates/{id}: true when deleted, false when it did not exist (404).
    template <class CompletionToken = default_completion_token>
    auto async_delete_snapshot(std::string snapshot_id, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<bool>(
            token, [this](auto... a) { do_delete_snapshot(std::move(a)...); }, std::move(snapshot_id));
    }
    /// POST /volumes: a new, empty volume, with its content token (registered with the redactor).
    template <class CompletionToken = default_completion_token>
    auto async_create_volume(std::string name, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<volume_info>(
            token, [this](auto... a) { do_create_volume(std::move(a)...); }, std::move(name));
    }
    /// GET /volumes/{id}: the volume and its content token.
    template <class CompletionToken = default_completion_token>
    auto async_get_volume(std::string volume_id, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<volume_info>(
            token, [this](auto... a) { do_get_volume(std::move(a)...); }, std::move(volume_id));
    }
    /// GET /volumes: every volume (no tokens).
    template <class CompletionToken = default_completion_token>
    auto async_list_volumes(CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::vector<volume_info>>(
            token, [this](auto... a) { do_list_volumes(std::move(a)...); });
    }
    /// DELETE /volumes/{id}: true when deleted, false when it did not exist (404).
    template <class CompletionToken = default_completion_token>
    auto async_delete_volume(std::string volume_id, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<bool>(
            token, [this](auto... a) { do_delete_volume(std::move(a)...); }, std::move(volume_id));
    }
    /// One call of the volume-content API (GET/POST /volumecontent/{id}/dir, GET/PATCH/DELETE
    /// .../path, GET/PUT .../file), under the volume's token, at the API's origin. A missing
    /// path is not_found.
    template <class CompletionToken = default_completion_token>
    auto async_volume_list(volume_ref volume, std::string path, std::uint32_t depth = 1, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::vector<volume_entry>>(
            token, [this](auto... a) { do_volume_list(std::move(a)...); }, std::move(volume), std::move(path), depth);
    }
    /// POST /volumecontent/{id}/dir.
    template <class CompletionToken = default_completion_token>
    auto async_volume_make_dir(volume_ref volume, std::string path, volume_write_options options = {},
                               CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<volume_entry>(
            token, [this](auto... a) { do_volume_make_dir(std::move(a)...); }, std::move(volume), std::move(path),
            std::move(options));
    }
    /// GET /volumecontent/{id}/path.
    template <class CompletionToken = default_completion_token>
    auto async_volume_stat(volume_ref volume, std::string path, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<volume_entry>(
            token, [this](auto... a) { do_volume_stat(std::move(a)...); }, std::move(volume), std::move(path));
    }
    /// PATCH /volumecontent/{id}/path: owner and mode.
    template <class CompletionToken = default_completion_token>
    auto async_volume_update_metadata(volume_ref volume, std::string path, volume_metadata metadata,
                                      CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<volume_entry>(
            token, [this](auto... a) { do_volume_update_metadata(std::move(a)...); }, std::move(volume),
            std::move(path), std::move(metadata));
    }
    /// GET /volumecontent/{id}/file: the whole file, held in memory.
    template <class CompletionToken = default_completion_token>
    auto async_volume_read_file(volume_ref volume, std::string path, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::string>(
            token, [this](auto... a) { do_volume_read_file(std::move(a)...); }, std::move(volume), std::move(path));
    }
    /// PUT /volumecontent/{id}/file: creates or replaces the file.
    template <class CompletionToken = default_completion_token>
    auto async_volume_write_file(volume_ref volume, std::string path, std::string data,
                                 volume_write_options options = {}, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<volume_entry>(
            token, [this](auto... a) { do_volume_write_file(std::move(a)...); }, std::move(volume), std::move(path),
            std::move(data), std::move(options));
    }
    /// DELETE /volumecontent/{id}/path: a file, or a directory with everything in it.
    template <class CompletionToken = default_completion_token>
    auto async_volume_remove(volume_ref volume, std::string path, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<void>(
            token, [this](auto... a) { do_volume_remove(std::move(a)...); }, std::move(volume), std::move(path));
    }
    /// GET /v2/sandboxes/{id}/logs: the sandbox's log entries.
    template <class CompletionToken = default_completion_token>
    auto async_get_sandbox_logs(std::string sandbox_id, logs_params params = {}, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::vector<sandbox_log_entry>>(
            token, [this](auto... a) { do_get_sandbox_logs(std::move(a)...); }, std::move(sandbox_id),
            std::move(params));
    }
    /// PUT /sandboxes/{id}/network: replaces the egress rules. A server without
    /// network control (501, prism-e2b-local) is errc::unsupported.
    template <class CompletionToken = default_completion_token>
    auto async_update_network(std::string sandbox_id, network_update update, CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<void>(
            token, [this](auto... a) { do_update_network(std::move(a)...); }, std::move(sandbox_id), std::move(update));
    }

    /// "<port>-<sandbox id>.<domain>", the host of a port of the sandbox as the
    /// SDK's getHost(port) builds it (the target's domain, else the client's).
    result<std::string> get_host(envd_target const& target, std::uint16_t port) const
    {
        return do_get_host(target, port);
    }
    /// A /files URL usable without the access token, signed as the SDK's
    /// uploadUrl / downloadUrl sign it. errc::invalid_argument when the target
    /// has no access token but an expiry is asked (as the SDK).
    result<std::string> file_url(envd_target const& target, std::string const& path,
                                 file_url_options const& options = {}) const
    {
        return do_file_url(target, path, options);
    }

protected:
    // The bodies of the operations above (the public templates' only callers).
    virtual void do_create_sandbox(create_sandbox_params params,
                                   completion_handler<sandbox_handle> h) = 0;  ///< body of async_create_sandbox
    virtual void do_connect_sandbox(std::string sandbox_id, std::chrono::seconds timeout,
                                    completion_handler<connect_result> h) = 0;  ///< body of async_connect_sandbox
    virtual void do_pause_sandbox(std::string sandbox_id, bool memory,
                                  completion_handler<pause_reply> h) = 0;  ///< body of async_pause_sandbox
    virtual void do_kill_sandbox(std::string sandbox_id,
                                 completion_handler<bool> h) = 0;  ///< body of async_kill_sandbox
    virtual void do_get_sandbox_info(std::string sandbox_id,
                                     completion_handler<sandbox_info> h) = 0;  ///< body of async_get_sandbox_info
    virtual void do_list_sandboxes(list_params params,
                                   completion_handler<sandbox_page> h) = 0;  ///< body of async_list_sandboxes
    virtual void do_set_sandbox_timeout(std::string sandbox_id, std::chrono::seconds timeout,
                                        completion_handler<void> h) = 0;  ///< body of async_set_sandbox_timeout
    virtual void do_start_process(
        envd_target target, start_process_params params,
        completion_handler<std::unique_ptr<process_event_stream>> h) = 0;  ///< body of async_start_process
    virtual void do_connect_process(
        envd_target target, process_selector selector, std::chrono::milliseconds timeout,
        completion_handler<std::unique_ptr<process_event_stream>> h) = 0;  ///< body of async_connect_process
    virtual void do_list_processes(
        envd_target target, completion_handler<std::vector<process_info>> h) = 0;  ///< body of async_list_processes
    virtual void do_send_stdin(envd_target target, process_selector selector, std::string bytes,
                               completion_handler<void> h) = 0;  ///< body of async_send_stdin
    virtual void do_close_stdin(envd_target target, process_selector selector,
                                completion_handler<void> h) = 0;  ///< body of async_close_stdin
    virtual void do_send_signal(envd_target target, process_selector selector, process_signal sig,
                                completion_handler<void> h) = 0;  ///< body of async_send_signal
    virtual void do_read_file(envd_target target, std::string path,
                              completion_handler<std::string> h) = 0;  ///< body of async_read_file
    virtual void do_write_file(envd_target target, std::string path, std::string data,
                               completion_handler<entry_info> h) = 0;  ///< body of async_write_file
    virtual void do_make_dir(envd_target target, std::string path,
                             completion_handler<bool> h) = 0;  ///< body of async_make_dir
    virtual void do_stat(envd_target target, std::string path,
                         completion_handler<entry_info> h) = 0;  ///< body of async_stat
    virtual void do_list_dir(envd_target target, std::string path, std::uint32_t depth,
                             completion_handler<std::vector<entry_info>> h) = 0;  ///< body of async_list_dir
    virtual void do_move(envd_target target, std::string source, std::string destination,
                         completion_handler<entry_info> h) = 0;  ///< body of async_move
    virtual void do_remove(envd_target target, std::string path,
                           completion_handler<void> h) = 0;                      ///< body of async_remove
    virtual void do_health(envd_target target, completion_handler<bool> h) = 0;  ///< body of async_health

    // Terminals and metrics: optional; these defaults complete with
    // errc::unsupported on the handler's associated executor (e2b_client.cpp).
    /// Body of async_start_pty.
    virtual void do_start_pty(envd_target target, pty_start_params params, completion_handler<pty_stream> h);
    /// Body of async_send_pty_input.
    virtual void do_send_pty_input(envd_target target, process_selector selector, std::string bytes,
                                   completion_handler<void> h);
    /// Body of async_resize_pty.
    virtual void do_resize_pty(envd_target target, process_selector selector, pty_size size,
                               completion_handler<void> h);
    /// Body of async_get_sandbox_metrics.
    virtual void do_get_sandbox_metrics(std::string sandbox_id, metrics_params params,
                                        completion_handler<std::vector<sandbox_metric>> h);
    /// Body of async_watch_dir.
    virtual void do_watch_dir(envd_target target, watch_dir_params params,
                              completion_handler<std::unique_ptr<watch_event_stream>> h);
    // Files, snapshots, logs, network and URLs: optional like the above.
    /// Body of async_read_file_stream.
    virtual void do_read_file_stream(envd_target target, std::string path, chunk_sink sink, transfer_options options,
                                     completion_handler<transfer_summary> handler);
    /// Body of async_write_file_stream.
    virtual void do_write_file_stream(envd_target target, std::string path, chunk_source source,
                                      transfer_options options, completion_handler<streamed_write> handler);
    /// Body of async_write_files.
    virtual void do_write_files(envd_target target, std::vector<file_write> files,
                                completion_handler<std::vector<entry_info>> handler);
    /// Body of async_exists.
    virtual void do_exists(envd_target target, std::string path, completion_handler<bool> handler);
    /// Body of async_create_snapshot.
    virtual void do_create_snapshot(std::string sandbox_id, create_snapshot_params params,
                                    completion_handler<snapshot_info> handler);
    /// Body of async_fork_sandbox.
    virtual void do_fork_sandbox(std::string sandbox_id, fork_params params,
                                 completion_handler<std::vector<result<sandbox_handle>>> handler);
    /// Body of async_list_snapshots.
    virtual void do_list_snapshots(snapshot_list_params params, completion_handler<snapshot_page> handler);
    /// Body of async_delete_snapshot.
    virtual void do_delete_snapshot(std::string snapshot_id, completion_handler<bool> handler);
    /// Body of async_create_volume.
    virtual void do_create_volume(std::string name, completion_handler<volume_info> handler);
    /// Body of async_get_volume.
    virtual void do_get_volume(std::string volume_id, completion_handler<volume_info> handler);
    /// Body of async_list_volumes.
    virtual void do_list_volumes(completion_handler<std::vector<volume_info>> handler);
    /// Body of async_delete_volume.
    virtual void do_delete_volume(std::string volume_id, completion_handler<bool> handler);
    /// Body of async_volume_list.
    virtual void do_volume_list(volume_ref volume, std::string path, std::uint32_t depth,
                                completion_handler<std::vector<volume_entry>> handler);
    /// Body of async_volume_make_dir.
    virtual void do_volume_make_dir(volume_ref volume, std::string path, volume_write_options options,
                                    completion_handler<volume_entry> handler);
    /// Body of async_volume_stat.
    virtual void do_volume_stat(volume_ref volume, std::string path, completion_handler<volume_entry> handler);
    /// Body of async_volume_update_metadata.
    virtual void do_volume_update_metadata(volume_ref volume, std::string path, volume_metadata metadata,
                                           completion_handler<volume_entry> handler);
    /// Body of async_volume_read_file.
    virtual void do_volume_read_file(volume_ref volume, std::string path, completion_handler<std::string> handler);
    /// Body of async_volume_write_file.
    virtual void do_volume_write_file(volume_ref volume, std::string path, std::string data,
                                      volume_write_options options, completion_handler<volume_entry> handler);
    /// Body of async_volume_remove.
    virtual void do_volume_remove(volume_ref volume, std::string path, completion_handler<void> handler);
    /// Body of async_get_sandbox_logs.
    virtual void do_get_sandbox_logs(std::string sandbox_id, logs_params params,
                                     completion_handler<std::vector<sandbox_log_entry>> handler);
    /// Body of async_update_network.
    virtual void do_update_network(std::string sandbox_id, network_update update, completion_handler<void> handler);
    /// Body of get_host.
    virtual result<std::string> do_get_host(envd_target const& target, std::uint16_t port) const;
    /// Body of file_url.
    virtual result<std::string> do_file_url(envd_target const& target, std::string const& path,
                                            file_url_options const& options) const;
};

/// The real client over Boost.Beast + OpenSSL. Reads the E2B_* environment for
/// fields `options` leaves empty (see client_options). Registers the API key and
/// every access token it sees with secret_redactor::global(). Its operations
/// run on `executor` (make it a strand or a single-threaded io_context, or not:
/// the client is thread-safe).
/// Errors: errc::invalid_argument for an unusable configuration (no API key,
/// bad URL, unreadable CA file).
PRISM_E2B_API result<std::shared_ptr<client>> make_client(boost::asio::any_io_executor executor,
                                                          client_options options);

}  // namespace prism_e2b::e2b

#endif
