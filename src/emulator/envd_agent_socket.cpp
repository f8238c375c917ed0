// The envd agent's own socket (envd_agent_socket.hpp).
#include "emulator/envd_agent_socket.hpp"

#include "emulator/sandbox_fs.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace fs = std::filesystem;

fs::path released_marker(fs::path const& socket) { return socket.parent_path() / "released"; }

fs::path agent_reconfigure_file(fs::path const& socket) { return socket.parent_path() / "reconfigure.json"; }

namespace {

/// The socket descriptors this process holds (its listener, connections not closed yet).
std::vector<int> socket_fds()
{
    std::vector<int> out;
    std::error_code ec;
    for (auto const& e : fs::directory_iterator("/proc/self/fd", ec)) {
        auto const target = fs::read_symlink(e.path(), ec);
        if (!ec && target.native().rfind("socket:", 0) == 0) out.push_back(std::atoi(e.path().filename().c_str()));
    }
    return out;
}

/// A listening Unix socket at `path` (a stale file replaced). Not listen_agent_socket(): gVisor
/// refuses chmod of a socket bound on the host; the directory it is in is the server's, 0700.
unique_fd bind_socket(fs::path const& path)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.native().size() >= sizeof addr.sun_path) return unique_fd();
    std::memcpy(addr.sun_path, path.c_str(), path.native().size() + 1);
    unique_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ::unlink(path.c_str());
    if (!fd || ::bind(fd.get(), reinterpret_cast<sockaddr const*>(&addr), sizeof addr) != 0 ||
        ::listen(fd.get(), SOMAXCONN) != 0)
        return unique_fd();
    return fd;
}

}  // namespace

agent_socket::agent_socket(asio::any_io_executor ex, fs::path path, listener_factory make)
    : ex_(ex), path_(std::move(path)), make_(std::move(make)), relisten_(ex, SIGUSR1)
{
    arm_signal();
}

void agent_socket::arm_signal()
{
    relisten_.async_wait([this](boost::system::error_code ec, int) {
        if (ec) return;
        listen();
        arm_signal();
    });
}

bool agent_socket::listen()
{
    std::lock_guard lk(mutex_);
    std::error_code ec;
    if (current_ && !released_) {
        if (fs::exists(path_, ec)) return true;
        current_->stop();  // its file was removed (the server took it for a stale one): a new one
        retired_.push_back(current_);
    }
    auto fd = bind_socket(path_);
    if (!fd) return false;
    ::unlink(released_marker(path_).c_str());
    std::shared_ptr<http_listener> l = make_(this);
    if (!l->adopt(fd.release())) return false;
    current_ = std::move(l);
    released_ = false;
    return true;
}

void agent_socket::release()
{
    {
        std::lock_guard lk(mutex_);
        if (!current_ || released_) return;
        released_ = true;
        current_->stop();
        // Under gVisor a session parked in a read of a host socket is not woken by stop() or
        // shutdown(), so every socket left is replaced by /dev/null in place (its descriptor
        // number stays taken until asio closes it): the sockets are closed now, answers already
        // sent delivered.
        unique_fd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
        for (int fd : socket_fds())
            if (null) ::dup3(null.get(), fd, O_CLOEXEC);
        retired_.push_back(current_);
    }
    // Outside the lock: co_spawn may run the coroutine at once on this thread.
    asio::co_spawn(ex_, remove_when_closed(), asio::detached);
}

asio::awaitable<void> agent_socket::remove_when_closed()
{
    // Wait until every socket is closed (at most 45 s, the server's wait; otherwise no marker,
    // and the server does not checkpoint). A deadline, not a count of timer waits: under
    // gVisor each wait may take far longer than asked.
    asio::steady_timer t(ex_);
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(45);
    while (std::chrono::steady_clock::now() < deadline) {
        {
            std::lock_guard lk(mutex_);
            if (!released_) co_return;  // bound again meanwhile
            if (socket_fds().empty()) {
                // A file next to the socket says so (gVisor does not let the agent remove the
                // socket file itself: the server does, before it asks for a new one).
                unique_fd marker(::open(released_marker(path_).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
                co_return;
            }
        }
        t.expires_after(std::chrono::milliseconds(2));
        co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    }
}

}  // namespace prism_e2b::local::detail
