// The real e2b::client: control plane (control_plane.cpp), envd unary and
// plain HTTP (envd_client.cpp), envd process streams (process_stream.cpp).
#ifndef PRISM_E2B_WIRE_CLIENT_IMPL_HPP
#define PRISM_E2B_WIRE_CLIENT_IMPL_HPP

#include <prism_e2b/e2b/coroutine_client.hpp>

#include "core/async_semaphore.hpp"
#include "wire/exchange.hpp"
#include "wire/h2_transport.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace prism_e2b::wire {

inline constexpr std::string_view envd_port = "49983";
/// Asked of envd on every stream (Keepalive-Ping-Interval, seconds, as the official SDK).
inline constexpr std::chrono::seconds stream_keepalive_interval{50};

/// Every call goes through `stub_`: the retry decorator over the transport.
/// Each operation is a coroutine (coroutine_client runs it through spawn_op);
/// the optional ones (terminals, metrics) override client's do_x the same way.
/// Thread safety: every member may be called concurrently; the object holds
/// only immutable configuration plus the thread-safe transport and semaphore.
class client_impl final : public e2b::coroutine_client {
public:
    client_impl(boost::asio::any_io_executor ex, e2b::resolved_client_options opts, std::shared_ptr<exchange> transport,
                origin api, std::optional<origin> sandbox);

    exchange& transport() noexcept { return *transport_; }

protected:
    // control plane
    boost::asio::awaitable<result<e2b::sandbox_handle>> create_sandbox(e2b::create_sandbox_params params) override;
    boost::asio::awaitable<result<e2b::connect_result>> connect_sandbox(std::string sandbox_id,
                                                                        std::chrono::seconds timeout) override;
    boost::asio::awaitable<result<e2b::pause_reply>> pause_sandbox(std::string sandbox_id, bool memory) override;
    boost::asio::awaitable<result<bool>> kill_sandbox(std::string sandbox_id) override;
    boost::asio::awaitable<result<e2b::sandbox_info>> get_sandbox_info(std::string sandbox_id) override;
    boost::asio::awaitable<result<e2b::sandbox_page>> list_sandboxes(e2b::list_params params) override;
    boost::asio::awaitable<result<void>> set_sandbox_timeout(std::string sandbox_id,
                                                             std::chrono::seconds timeout) override;

    // envd: process
    boost::asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> start_process(
        e2b::envd_target target, e2b::start_process_params params) override;
    boost::asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> connect_process(
        e2b::envd_target target, e2b::process_selector selector, std::chrono::milliseconds timeout) override;
    boost::asio::awaitable<result<std::vector<e2b::process_info>>> list_processes(e2b::envd_target target) override;
    boost::asio::awaitable<result<void>> send_stdin(e2b::envd_target target, e2b::process_selector selector,
                                                    std::string bytes) override;
    boost::asio::awaitable<result<void>> close_stdin(e2b::envd_target target, e2b::process_selector selector) override;
    boost::asio::awaitable<result<void>> send_signal(e2b::envd_target target, e2b::process_selector selector,
                                                     process_signal sig) override;

    // envd: files
    boost::asio::awaitable<result<std::string>> read_file(e2b::envd_target target, std::string path) override;
    boost::asio::awaitable<result<e2b::entry_info>> write_file(e2b::envd_target target, std::string path,
                                                               std::string data) override;
    boost::asio::awaitable<result<bool>> make_dir(e2b::envd_target target, std::string path) override;
    boost::asio::awaitable<result<e2b::entry_info>> stat(e2b::envd_target target, std::string path) override;
    boost::asio::awaitable<result<std::vector<e2b::entry_info>>> list_dir(e2b::envd_target target, std::string path,
                                                                          std::uint32_t depth) override;
    boost::asio::awaitable<result<e2b::entry_info>> move(e2b::envd_target target, std::string source,
                                                         std::string destination) override;
    boost::asio::awaitable<result<void>> remove(e2b::envd_target target, std::string path) override;
    boost::asio::awaitable<result<bool>> health(e2b::envd_target target) override;

    // envd: terminals (envd_pty.cpp)
    void do_start_pty(e2b::envd_target target, e2b::pty_start_params params,
                      completion_handler<e2b::pty_stream> h) override;
    void do_send_pty_input(e2b::envd_target target, e2b::process_selector selector, std::string bytes,
                           completion_handler<void> h) override;
    void do_resize_pty(e2b::envd_target target, e2b::process_selector selector, e2b::pty_size size,
                       completion_handler<void> h) override;
    // control plane: metrics (control_metrics.cpp)
    void do_get_sandbox_metrics(std::string sandbox_id, e2b::metrics_params params,
                                completion_handler<std::vector<e2b::sandbox_metric>> h) override;
    // envd: filesystem.Filesystem/WatchDir (watch_stream.cpp)
    void do_watch_dir(e2b::envd_target target, e2b::watch_dir_params params,
                      completion_handler<std::unique_ptr<e2b::watch_event_stream>> h) override;
    void do_read_file_stream(e2b::envd_target target, std::string path, e2b::chunk_sink sink,
                             e2b::transfer_options options, completion_handler<e2b::transfer_summary> h) override;
    void do_write_file_stream(e2b::envd_target target, std::string path, e2b::chunk_source source,
                              e2b::transfer_options options, completion_handler<e2b::streamed_write> h) override;
    void do_write_files(e2b::envd_target target, std::vector<e2b::file_write> files,
                        completion_handler<std::vector<e2b::entry_info>> h) override;
    void do_exists(e2b::envd_target target, std::string path, completion_handler<bool> h) override;
    void do_create_snapshot(std::string sandbox_id, e2b::create_snapshot_params params,
                            completion_handler<e2b::snapshot_info> h) override;
    void do_list_snapshots(e2b::snapshot_list_params params, completion_handler<e2b::snapshot_page> h) override;
    void do_fork_sandbox(std::string sandbox_id, e2b::fork_params params,
                         completion_handler<std::vector<result<e2b::sandbox_handle>>> h) override;
    void do_delete_snapshot(std::string snapshot_id, completion_handler<bool> h) override;
    void do_get_sandbox_logs(std::string sandbox_id, e2b::logs_params params,
                             completion_handler<std::vector<e2b::sandbox_log_entry>> h) override;
    // control plane: volumes and the volume-content API (control_volumes.cpp)
    void do_create_volume(std::string name, completion_handler<e2b::volume_info> h) override;
    void do_get_volume(std::string volume_id, completion_handler<e2b::volume_info> h) override;
    void do_list_volumes(completion_handler<std::vector<e2b::volume_info>> h) override;
    void do_delete_volume(std::string volume_id, completion_handler<bool> h) override;
    void do_volume_list(e2b::volume_ref volume, std::string path, std::uint32_t depth,
                        completion_handler<std::vector<e2b::volume_entry>> h) override;
    void do_volume_make_dir(e2b::volume_ref volume, std::string path, e2b::volume_write_options options,
                            completion_handler<e2b::volume_entry> h) override;
    void do_volume_stat(e2b::volume_ref volume, std::string path, completion_handler<e2b::volume_entry> h) override;
    void do_volume_update_metadata(e2b::volume_ref volume, std::string path, e2b::volume_metadata metadata,
                                   completion_handler<e2b::volume_entry> h) override;
    void do_volume_read_file(e2b::volume_ref volume, std::string path, completion_handler<std::string> h) override;
    void do_volume_write_file(e2b::volume_ref volume, std::string path, std::string data,
                              e2b::volume_write_options options, completion_handler<e2b::volume_entry> h) override;
    void do_volume_remove(e2b::volume_ref volume, std::string path, completion_handler<void> h) override;

    void do_update_network(std::string sandbox_id, e2b::network_update update, completion_handler<void> h) override;
    // signed_urls.cpp
    result<std::string> do_get_host(e2b::envd_target const& target, std::uint16_t port) const override;
    result<std::string> do_file_url(e2b::envd_target const& target, std::string const& path,
                                    e2b::file_url_options const& options) const override;

private:
    boost::asio::awaitable<result<e2b::pty_stream>> start_pty(e2b::envd_target target, e2b::pty_start_params params);
    boost::asio::awaitable<result<void>> send_pty_input(e2b::envd_target target, e2b::process_selector selector,
                                                        std::string bytes);
    boost::asio::awaitable<result<void>> resize_pty(e2b::envd_target target, e2b::process_selector selector,
                                                    e2b::pty_size size);
    boost::asio::awaitable<result<std::vector<e2b::sandbox_metric>>> get_sandbox_metrics(std::string sandbox_id,
                                                                                         e2b::metrics_params params);
    /// One control-plane request with retries; errors are transport errors only.
    boost::asio::awaitable<result<http_response>> api_call(std::string method, std::string target,
                                                           std::optional<std::string> body, bool idempotent);
    /// One request at the API's origin with the given credentials (api_call: X-API-KEY; the
    /// volume-content API: the volume's Bearer token), a body of `content_type`.
    boost::asio::awaitable<result<http_response>> origin_call(std::string method, std::string target, header_list auth,
                                                              std::optional<std::string> body, std::string content_type,
                                                              bool idempotent);
    /// A volume-content call (control_volumes.cpp): a 2xx answer, or its mapped error.
    boost::asio::awaitable<result<http_response>> volume_call(std::string method, std::string what,
                                                              e2b::volume_ref const& volume, std::string query,
                                                              std::optional<std::string> body, char const* content_type,
                                                              bool idempotent);
    /// api_call on the v2 path, then once on the v1 path when the server does not know v2 (404/405);
    /// `v1_only` is set when v1 then answered 2xx, and while set only v1 is asked. An empty
    /// `v2_target`: a request only v1 can express.
    boost::asio::awaitable<result<http_response>> api_call_v2_or_v1(std::string v2_target, std::string v2_body,
                                                                    std::string v1_target, std::string v1_body,
                                                                    std::atomic<bool>& v1_only);
    result<origin> envd_origin(e2b::envd_target const& t) const;
    header_list envd_headers(e2b::envd_target const& t, std::optional<std::string> const& user) const;
    /// A unary Connect call: 200 yields the body, anything else the mapped error.
    boost::asio::awaitable<result<std::string>> envd_unary(std::string rpc, e2b::envd_target target, std::string body,
                                                           bool idempotent);
    /// A plain envd HTTP request (files, health), holding an in-flight slot.
    boost::asio::awaitable<result<http_response>> envd_http(e2b::envd_target target, http_request req,
                                                            call_options call);
    /// An open Connect server stream and the in-flight slot it holds.
    struct open_stream_result {
        std::unique_ptr<http_stream> stream;
        semaphore_permit slot;
    };
    /// Waits for a place among the streams being opened (client_options::max_opening_streams),
    /// then awaits `open()` holding it: every stream-opening call goes through here, and its place
    /// is held until `open` has the response head. While a call waits, only this frame exists
    /// (`open` holds the call's arguments): the request and the coroutines that send it are built
    /// once the place is granted, so thousands of waiting calls stay small.
    template <class T, class Open>
    boost::asio::awaitable<result<T>> when_opening(Open open)
    {
        semaphore_permit place;
        if (opening_slots_) {
            auto granted = co_await opening_slots_->acquire();
            if (!granted) co_return granted.error();
            place = std::move(*granted);
        }
        co_return co_await open();
    }
    /// The error of a call refused before it waits (its arguments are invalid).
    template <class T>
    static boost::asio::awaitable<result<T>> refused(error e)
    {
        co_return e;
    }
    boost::asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> start_process_now(
        e2b::envd_target target, e2b::start_process_params params);
    boost::asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> connect_process_now(
        e2b::envd_target target, e2b::process_selector selector, std::chrono::milliseconds timeout);
    boost::asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> start_pty_now(
        e2b::envd_target target, e2b::pty_start_params params);
    boost::asio::awaitable<result<std::unique_ptr<e2b::watch_event_stream>>> watch_dir_now(
        e2b::envd_target target, e2b::watch_dir_params params);
    /// Opens a Connect server stream: 200 with a connect+json body, else the mapped error.
    boost::asio::awaitable<result<open_stream_result>> open_connect_stream(std::string rpc, e2b::envd_target target,
                                                                           std::string body,
                                                                           std::chrono::milliseconds deadline,
                                                                           std::optional<std::string> user);
    boost::asio::awaitable<result<std::unique_ptr<e2b::watch_event_stream>>> watch_dir(e2b::envd_target target,
                                                                                       e2b::watch_dir_params params);
    boost::asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> open_process_stream(
        std::string rpc, e2b::envd_target target, std::string body, std::chrono::milliseconds deadline,
        std::optional<std::string> user);
    // issue 14 item 1 (client14): the coroutines behind the do_x overrides below
    // envd_transfer.cpp: streamed /files
    boost::asio::awaitable<result<e2b::transfer_summary>> read_file_stream(e2b::envd_target target, std::string path,
                                                                           e2b::chunk_sink sink,
                                                                           e2b::transfer_options options);
    boost::asio::awaitable<result<e2b::streamed_write>> write_file_stream(e2b::envd_target target, std::string path,
                                                                          e2b::chunk_source source,
                                                                          e2b::transfer_options options);
    // envd_batch.cpp: batch write and exists
    boost::asio::awaitable<result<std::vector<e2b::entry_info>>> write_files(e2b::envd_target target,
                                                                             std::vector<e2b::file_write> files);
    boost::asio::awaitable<result<bool>> exists(e2b::envd_target target, std::string path);
    // control_snapshots.cpp
    boost::asio::awaitable<result<e2b::snapshot_info>> create_snapshot(std::string sandbox_id,
                                                                       e2b::create_snapshot_params params);
    boost::asio::awaitable<result<e2b::snapshot_page>> list_snapshots(e2b::snapshot_list_params params);
    boost::asio::awaitable<result<std::vector<result<e2b::sandbox_handle>>>> fork_sandbox(std::string sandbox_id,
                                                                                          e2b::fork_params params);
    boost::asio::awaitable<result<bool>> delete_snapshot(std::string snapshot_id);
    // control_logs.cpp: logs and network
    boost::asio::awaitable<result<std::vector<e2b::sandbox_log_entry>>> get_sandbox_logs(std::string sandbox_id,
                                                                                         e2b::logs_params params);
    boost::asio::awaitable<result<void>> update_network(std::string sandbox_id, e2b::network_update update);

    /// The entry of a file just uploaded: Stat of the path envd reported, so the
    /// size is real (envd's upload answer has none); the upload's own entry when
    /// Stat fails (the file was written either way).
    boost::asio::awaitable<e2b::entry_info> stat_or(e2b::envd_target target, e2b::entry_info uploaded);
    /// The written file of a single-file POST /files answer (status, body, then stat_or()).
    boost::asio::awaitable<result<e2b::entry_info>> uploaded_entry(e2b::envd_target target, http_response reply);
    /// /files?path=...[&username=...]
    static std::string files_target(std::string const& path, std::optional<std::string> const& user);
    /// The options of one call: attempt and call bounds, reply cap, retries.
    call_options call(bool idempotent, std::size_t max_reply) const;
    call_options call(bool idempotent) const { return call(idempotent, opts_.raw.max_response_bytes); }

    e2b::resolved_client_options opts_;
    std::shared_ptr<exchange> transport_;
    std::shared_ptr<exchange> stub_;
    origin api_;
    std::optional<origin> sandbox_;
    std::shared_ptr<async_semaphore> envd_slots_;
    std::shared_ptr<async_semaphore> opening_slots_;  ///< client_options::max_opening_streams; null: no cap
    /// Set once a server answered 404/405 to a v2 path and the v1 path then
    /// worked (an older E2B-compatible service): later calls go to v1 directly.
    std::atomic<bool> v1_create_{false};
    std::atomic<bool> v1_connect_{false};
};

/// Makes a process_event_stream over an open Connect server stream (process_stream.cpp);
/// its reads run on `ex` (the client's executor).
/// `idle_timeout` (client_options::stream_idle_timeout) bounds the silence between
/// two pieces of the stream, so a connection that vanished without a FIN cannot
/// hang a reader forever.
std::unique_ptr<e2b::process_event_stream> make_process_event_stream(boost::asio::any_io_executor ex,
                                                                     std::unique_ptr<http_stream> stream,
                                                                     semaphore_permit slot, std::string operation,
                                                                     std::chrono::milliseconds idle_timeout);

/// -1, 0, 1 comparing dotted versions ("0.5.7"); missing parts are 0.
int compare_versions(std::string_view a, std::string_view b) noexcept;

}  // namespace prism_e2b::wire

#endif
