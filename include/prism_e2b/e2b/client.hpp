// The E2B client surface: the injection seam between the adapter and the vendor.
#ifndef PRISM_E2B_E2B_CLIENT_HPP
#define PRISM_E2B_E2B_CLIENT_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/e2b/client_options.hpp>
#include <prism_e2b/e2b/file_transfer.hpp>
#include <prism_e2b/e2b/network.hpp>
#include <prism_e2b/e2b/sandbox_logs.hpp>
#include <prism_e2b/e2b/snapshots.hpp>
#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <memory>
#include <string>
#include <vector>

namespace prism_e2b::e2b {

/// Every E2B call the SDK makes: the control plane (REST) and envd (Connect-RPC
/// and plain HTTP). make_client() returns the real implementation; hosts and
/// tests may inject their own.
///
/// Errors: vendor statuses map to errc (401 unauthenticated, 404 not_found, 409
/// conflict, 429 rate_limited after retries, 503 service_busy, other 5xx
/// server_error); transport errors pass through. Every message is redacted.
/// Per-operation cancellation: terminal, on every call; the result is then
/// errc::cancelled.
/// Thread safety: all members may be called concurrently.
class PRISM_E2B_API client {
public:
    virtual ~client() = default;

    // -- control plane ------------------------------------------------------
    virtual boost::asio::awaitable<result<sandbox_handle>> create_sandbox(
        create_sandbox_params params) = 0;  ///< POST /sandboxes: starts a sandbox
    /// Resumes a paused sandbox or extends a running one's timeout.
    virtual boost::asio::awaitable<result<connect_result>> connect_sandbox(std::string sandbox_id,
                                                                           std::chrono::seconds timeout) = 0;
    virtual boost::asio::awaitable<result<pause_reply>> pause_sandbox(
        std::string sandbox_id, bool memory) = 0;  ///< POST /sandboxes/{id}/pause; `memory` keeps the processes' memory
                                                   ///< (else the filesystem only)
    /// True when killed, false when it was already gone (404).
    virtual boost::asio::awaitable<result<bool>> kill_sandbox(std::string sandbox_id) = 0;
    virtual boost::asio::awaitable<result<sandbox_info>> get_sandbox_info(
        std::string sandbox_id) = 0;  ///< GET /sandboxes/{id}
    virtual boost::asio::awaitable<result<sandbox_page>> list_sandboxes(
        list_params params) = 0;  ///< GET /v2/sandboxes: one page
    virtual boost::asio::awaitable<result<void>> set_sandbox_timeout(
        std::string sandbox_id,
        std::chrono::seconds timeout) = 0;  ///< POST /sandboxes/{id}/timeout: the sandbox ends `timeout` from now

    // -- envd: process.Process ---------------------------------------------
    virtual boost::asio::awaitable<result<std::unique_ptr<process_event_stream>>> start_process(
        envd_target target,
        start_process_params params) = 0;  ///< process.Process/Start: runs a process and streams its events
    /// Re-attaches to a running process; `timeout` 0 sends no deadline.
    virtual boost::asio::awaitable<result<std::unique_ptr<process_event_stream>>> connect_process(
        envd_target target, process_selector selector, std::chrono::milliseconds timeout) = 0;
    virtual boost::asio::awaitable<result<std::vector<process_info>>> list_processes(
        envd_target target) = 0;  ///< process.Process/List
    virtual boost::asio::awaitable<result<void>> send_stdin(
        envd_target target, process_selector selector,
        std::string bytes) = 0;  ///< process.Process/SendInput: writes to the process's stdin
    virtual boost::asio::awaitable<result<void>> close_stdin(
        envd_target target, process_selector selector) = 0;  ///< process.Process/CloseStdin (envd >= 0.5.2)
    virtual boost::asio::awaitable<result<void>> send_signal(envd_target target, process_selector selector,
                                                             process_signal sig) = 0;  ///< process.Process/SendSignal

    // -- envd: files and filesystem.Filesystem ------------------------------
    virtual boost::asio::awaitable<result<std::string>> read_file(
        envd_target target, std::string path) = 0;  ///< GET /files: the file's bytes
    virtual boost::asio::awaitable<result<entry_info>> write_file(
        envd_target target, std::string path,
        std::string data) = 0;  ///< POST /files: writes (creates or replaces) the file
    /// True when created, false when it existed already.
    virtual boost::asio::awaitable<result<bool>> make_dir(envd_target target, std::string path) = 0;
    virtual boost::asio::awaitable<result<entry_info>> stat(envd_target target,
                                                            std::string path) = 0;  ///< filesystem.Filesystem/Stat
    virtual boost::asio::awaitable<result<std::vector<entry_info>>> list_dir(
        envd_target target, std::string path,
        std::uint32_t depth) = 0;  ///< filesystem.Filesystem/ListDir, `depth` levels deep
    virtual boost::asio::awaitable<result<entry_info>> move(
        envd_target target, std::string source,
        std::string destination) = 0;  ///< filesystem.Filesystem/Move
    virtual boost::asio::awaitable<result<void>> remove(envd_target target,
                                                        std::string path) = 0;  ///< filesystem.Filesystem/Remove
    /// GET /health: true on 204, false when envd answers 502 (sandbox not running).
    virtual boost::asio::awaitable<result<bool>> health(envd_target target) = 0;

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
        return detail::initiate<transfer_summary>(
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
        return detail::initiate<streamed_write>(
            token, [this](auto... a) { do_write_file_stream(std::move(a)...); }, std::move(target), std::move(path),
            std::move(source), std::move(options));
    }
    /// POST /files with several files in one multipart request (the SDK's
    /// files.write([...])); the entries in the order given, each with its real size.
    template <class CompletionToken = default_completion_token>
    auto async_write_files(envd_target target, std::vector<file_write> files, CompletionToken&& token = {})
    {
        return detail::initiate<std::vector<entry_info>>(
            token, [this](auto... a) { do_write_files(std::move(a)...); }, std::move(target), std::move(files));
    }
    /// True when `path` exists (file, directory or link), false when not (Stat answered not_found).
    template <class CompletionToken = default_completion_token>
    auto async_exists(envd_target target, std::string path, CompletionToken&& token = {})
    {
        return detail::initiate<bool>(
            token, [this](auto... a) { do_exists(std::move(a)...); }, std::move(target), std::move(path));
    }
    /// POST /sandboxes/{id}/snapshots: a persistent snapshot of the sandbox's
    /// current state (create_sandbox with its id as template_id starts from it).
    template <class CompletionToken = default_completion_token>
    auto async_create_snapshot(std::string sandbox_id, create_snapshot_params params = {}, CompletionToken&& token = {})
    {
        return detail::initiate<snapshot_info>(
            token, [this](auto... a) { do_create_snapshot(std::move(a)...); }, std::move(sandbox_id),
            std::move(params));
    }
    /// GET /snapshots: one page.
    template <class CompletionToken = default_completion_token>
    auto async_list_snapshots(snapshot_list_params params = {}, CompletionToken&& token = {})
    {
        return detail::initiate<snapshot_page>(
            token, [this](auto... a) { do_list_snapshots(std::move(a)...); }, std::move(params));
    }
    /// DELETE /templates/{id}: true when deleted, false when it did not exist (404).
    template <class CompletionToken = default_completion_token>
    auto async_delete_snapshot(std::string snapshot_id, CompletionToken&& token = {})
    {
        return detail::initiate<bool>(
            token, [this](auto... a) { do_delete_snapshot(std::move(a)...); }, std::move(snapshot_id));
    }
    /// GET /v2/sandboxes/{id}/logs: the sandbox's log entries.
    template <class CompletionToken = default_completion_token>
    auto async_get_sandbox_logs(std::string sandbox_id, logs_params params = {}, CompletionToken&& token = {})
    {
        return detail::initiate<std::vector<sandbox_log_entry>>(
            token, [this](auto... a) { do_get_sandbox_logs(std::move(a)...); }, std::move(sandbox_id),
            std::move(params));
    }
    /// PUT /sandboxes/{id}/network: replaces the egress rules. A server without
    /// network control (501, prism-e2b-local) is errc::unsupported.
    template <class CompletionToken = default_completion_token>
    auto async_update_network(std::string sandbox_id, network_update update, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
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
    virtual void do_read_file_stream(envd_target target, std::string path, chunk_sink sink, transfer_options options,
                                     completion_handler<transfer_summary> handler);
    virtual void do_write_file_stream(envd_target target, std::string path, chunk_source source,
                                      transfer_options options, completion_handler<streamed_write> handler);
    virtual void do_write_files(envd_target target, std::vector<file_write> files,
                                completion_handler<std::vector<entry_info>> handler);
    virtual void do_exists(envd_target target, std::string path, completion_handler<bool> handler);
    virtual void do_create_snapshot(std::string sandbox_id, create_snapshot_params params,
                                    completion_handler<snapshot_info> handler);
    virtual void do_list_snapshots(snapshot_list_params params, completion_handler<snapshot_page> handler);
    virtual void do_delete_snapshot(std::string snapshot_id, completion_handler<bool> handler);
    virtual void do_get_sandbox_logs(std::string sandbox_id, logs_params params,
                                     completion_handler<std::vector<sandbox_log_entry>> handler);
    virtual void do_update_network(std::string sandbox_id, network_update update, completion_handler<void> handler);
    virtual result<std::string> do_get_host(envd_target const& target, std::uint16_t port) const;
    virtual result<std::string> do_file_url(envd_target const& target, std::string const& path,
                                            file_url_options const& options) const;
    // ---- end of issue 14 item 1 (client14) --------------------------------------
};

/// The real client over Boost.Beast + OpenSSL. Reads the E2B_* environment for
/// fields `options` leaves empty (see client_options). Registers the API key and
/// every access token it sees with secret_redactor::global().
/// Errors: errc::invalid_argument for an unusable configuration (no API key,
/// bad URL, unreadable CA file).
PRISM_E2B_API result<std::shared_ptr<client>> make_client(boost::asio::any_io_executor executor,
                                                          client_options options);

}  // namespace prism_e2b::e2b

#endif
