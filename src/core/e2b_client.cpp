// e2b::client's defaults: the optional operations (terminals, metrics, and
// those added later) complete with errc::unsupported unless a client overrides
// them; make_client()'s does.
#include <prism_e2b/e2b/client.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/dispatch.hpp>

#include <utility>

namespace prism_e2b::e2b {
namespace {

/// Completes `h` with errc::unsupported for operation `name`, through the
/// handler's own executor (a client has none of its own).
template <class T>
void complete_unsupported(completion_handler<T> h, char const* name)
{
    result<T> r = error(errc::unsupported, "this client does not support the operation", {name, 0, {}});
    boost::asio::dispatch(boost::asio::append(std::move(h), std::move(r)));
}

/// The errc::unsupported error of operation `name` (the synchronous operations' default).
error unsupported(char const* name)
{
    return error(errc::unsupported, "this client does not support the operation", {name, 0, {}});
}

}  // namespace

client::~client() = default;

void client::do_start_pty(envd_target, pty_start_params, completion_handler<pty_stream> h)
{
    complete_unsupported(std::move(h), "process.Start");
}

void client::do_send_pty_input(envd_target, process_selector, std::string, completion_handler<void> h)
{
    complete_unsupported(std::move(h), "process.SendInput");
}

void client::do_resize_pty(envd_target, process_selector, pty_size, completion_handler<void> h)
{
    complete_unsupported(std::move(h), "process.Update");
}

void client::do_get_sandbox_metrics(std::string, metrics_params, completion_handler<std::vector<sandbox_metric>> h)
{
    complete_unsupported(std::move(h), "sandbox metrics");
}

void client::do_watch_dir(envd_target, watch_dir_params, completion_handler<std::unique_ptr<watch_event_stream>> h)
{
    complete_unsupported(std::move(h), "filesystem.WatchDir");
}

void client::do_read_file_stream(envd_target, std::string, chunk_sink, transfer_options,
                                 completion_handler<transfer_summary> h)
{
    complete_unsupported(std::move(h), "read file stream");
}
void client::do_write_file_stream(envd_target, std::string, chunk_source, transfer_options,
                                  completion_handler<streamed_write> h)
{
    complete_unsupported(std::move(h), "write file stream");
}
void client::do_write_files(envd_target, std::vector<file_write>, completion_handler<std::vector<entry_info>> h)
{
    complete_unsupported(std::move(h), "write files");
}
void client::do_exists(envd_target, std::string, completion_handler<bool> h)
{
    complete_unsupported(std::move(h), "exists");
}
void client::do_create_snapshot(std::string, create_snapshot_params, completion_handler<snapshot_info> h)
{
    complete_unsupported(std::move(h), "create snapshot");
}
void client::do_fork_sandbox(std::string, fork_params, completion_handler<std::vector<result<sandbox_handle>>> h)
{
    complete_unsupported(std::move(h), "fork sandbox");
}
void client::do_list_snapshots(snapshot_list_params, completion_handler<snapshot_page> h)
{
    complete_unsupported(std::move(h), "list snapshots");
}
void client::do_delete_snapshot(std::string, completion_handler<bool> h)
{
    complete_unsupported(std::move(h), "delete snapshot");
}
void client::do_create_volume(std::string, completion_handler<volume_info> h)
{
    complete_unsupported(std::move(h), "create volume");
}
void client::do_get_volume(std::string, completion_handler<volume_info> h)
{
    complete_unsupported(std::move(h), "get volume");
}
void client::do_list_volumes(completion_handler<std::vector<volume_info>> h)
{
    complete_unsupported(std::move(h), "list volumes");
}
void client::do_delete_volume(std::string, completion_handler<bool> h)
{
    complete_unsupported(std::move(h), "delete volume");
}
void client::do_volume_list(volume_ref, std::string, std::uint32_t, completion_handler<std::vector<volume_entry>> h)
{
    complete_unsupported(std::move(h), "volume list");
}
void client::do_volume_make_dir(volume_ref, std::string, volume_write_options, completion_handler<volume_entry> h)
{
    complete_unsupported(std::move(h), "volume make dir");
}
void client::do_volume_stat(volume_ref, std::string, completion_handler<volume_entry> h)
{
    complete_unsupported(std::move(h), "volume stat");
}
void client::do_volume_update_metadata(volume_ref, std::string, volume_metadata, completion_handler<volume_entry> h)
{
    complete_unsupported(std::move(h), "volume update metadata");
}
void client::do_volume_read_file(volume_ref, std::string, completion_handler<std::string> h)
{
    complete_unsupported(std::move(h), "volume read file");
}
void client::do_volume_write_file(volume_ref, std::string, std::string, volume_write_options,
                                  completion_handler<volume_entry> h)
{
    complete_unsupported(std::move(h), "volume write file");
}
void client::do_volume_remove(volume_ref, std::string, completion_handler<void> h)
{
    complete_unsupported(std::move(h), "volume remove");
}
void client::do_get_sandbox_logs(std::string, logs_params, completion_handler<std::vector<sandbox_log_entry>> h)
{
    complete_unsupported(std::move(h), "sandbox logs");
}
void client::do_update_network(std::string, network_update, completion_handler<void> h)
{
    complete_unsupported(std::move(h), "update network");
}
result<std::string> client::do_get_host(envd_target const&, std::uint16_t) const { return unsupported("get host"); }
result<std::string> client::do_file_url(envd_target const&, std::string const&, file_url_options const&) const
{
    return unsupported("file url");
}

}  // namespace prism_e2b::e2b
