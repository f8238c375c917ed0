// The default do_x of e2b::client's operations that a client may lack: each
// completes with errc::unsupported, so a host's own client (or a test double)
// keeps compiling and answers "not supported" instead of failing to link. The
// real client (src/wire/client_impl.hpp) overrides them all.
#include <prism_e2b/e2b/client.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/dispatch.hpp>

namespace prism_e2b::e2b {
namespace {

error unsupported(char const* op)
{
    return error(errc::unsupported, std::string(op) + " is not supported by this client", {op, 0, {}});
}

/// Completes `h` with errc::unsupported through its own executor.
template <class T>
void refuse(completion_handler<T> h, char const* op)
{
    result<T> r = unsupported(op);
    boost::asio::dispatch(boost::asio::append(std::move(h), std::move(r)));
}

}  // namespace

void client::do_read_file_stream(envd_target, std::string, chunk_sink, transfer_options,
                                 completion_handler<transfer_summary> h)
{
    refuse(std::move(h), "read file stream");
}
void client::do_write_file_stream(envd_target, std::string, chunk_source, transfer_options,
                                  completion_handler<streamed_write> h)
{
    refuse(std::move(h), "write file stream");
}
void client::do_write_files(envd_target, std::vector<file_write>, completion_handler<std::vector<entry_info>> h)
{
    refuse(std::move(h), "write files");
}
void client::do_exists(envd_target, std::string, completion_handler<bool> h) { refuse(std::move(h), "exists"); }
void client::do_create_snapshot(std::string, create_snapshot_params, completion_handler<snapshot_info> h)
{
    refuse(std::move(h), "create snapshot");
}
void client::do_list_snapshots(snapshot_list_params, completion_handler<snapshot_page> h)
{
    refuse(std::move(h), "list snapshots");
}
void client::do_delete_snapshot(std::string, completion_handler<bool> h) { refuse(std::move(h), "delete snapshot"); }
void client::do_get_sandbox_logs(std::string, logs_params, completion_handler<std::vector<sandbox_log_entry>> h)
{
    refuse(std::move(h), "sandbox logs");
}
void client::do_update_network(std::string, network_update, completion_handler<void> h)
{
    refuse(std::move(h), "update network");
}
result<std::string> client::do_get_host(envd_target const&, std::uint16_t) const { return unsupported("get host"); }
result<std::string> client::do_file_url(envd_target const&, std::string const&, file_url_options const&) const
{
    return unsupported("file url");
}

}  // namespace prism_e2b::e2b
