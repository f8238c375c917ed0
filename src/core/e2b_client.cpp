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

}  // namespace prism_e2b::e2b
