// Default bodies of the e2b::client operations added after the first
// interface: a client that does not implement one answers errc::unsupported
// (hosts' and tests' own clients keep compiling and say so).
#include <prism_e2b/e2b/client.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/dispatch.hpp>

namespace asio = boost::asio;

namespace prism_e2b::e2b {

namespace {

template <class T>
void complete_unsupported(completion_handler<T> h, char const* operation)
{
    result<T> r = error(errc::unsupported, "this client does not implement the operation", {operation, 0, {}});
    // Through the handler's own executor (its associated one, else the system's).
    asio::dispatch(asio::append(std::move(h), std::move(r)));
}

}  // namespace

// -- adapter14: filesystem.Filesystem/WatchDir -------------------------------
void client::do_watch_dir(envd_target, watch_dir_params, completion_handler<std::unique_ptr<watch_event_stream>> h)
{
    complete_unsupported(std::move(h), "filesystem.WatchDir");
}

}  // namespace prism_e2b::e2b
