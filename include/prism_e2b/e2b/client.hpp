// The E2B client surface: the injection seam between the adapter and the vendor.
#ifndef PRISM_E2B_E2B_CLIENT_HPP
#define PRISM_E2B_E2B_CLIENT_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/e2b/client_options.hpp>
#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/e2b/watch.hpp>
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

    // -- adapter14: filesystem.Filesystem/WatchDir ---------------------------
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

protected:
    /// Body of async_watch_dir. The default completes with errc::unsupported.
    virtual void do_watch_dir(envd_target target, watch_dir_params params,
                              completion_handler<std::unique_ptr<watch_event_stream>> h);
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
