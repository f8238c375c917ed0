// The envd agent's own socket (gVisor engine, envd_agent.hpp's listen_path):
// bound by the agent inside its container on a path the server shares, let go
// of on request before a checkpoint (runsc cannot save a socket bound on the
// host), and bound again on SIGUSR1 after the restore.
#ifndef PRISM_E2B_EMULATOR_ENVD_AGENT_SOCKET_HPP
#define PRISM_E2B_EMULATOR_ENVD_AGENT_SOCKET_HPP

#include "emulator/http_listener.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace prism_e2b::local::detail {

/// The file the agent creates next to its socket once it holds no socket any more (then the
/// server removes the socket file, which gVisor does not let the agent do, and checkpoints).
std::filesystem::path released_marker(std::filesystem::path const& socket);

/// The file the server writes next to the socket before a restore: the agent_config JSON of the
/// sandbox the restored agent now serves (a snapshot restored as a new sandbox has another id and
/// env vars). The agent applies and removes it when it binds its socket (0600: it holds env vars).
std::filesystem::path agent_reconfigure_file(std::filesystem::path const& socket);

/// Thread safety: listen() and release() from any thread (one mutex).
class agent_socket {
public:
    using listener_factory = std::function<std::unique_ptr<http_listener>(agent_socket*)>;
    agent_socket(boost::asio::any_io_executor ex, std::filesystem::path path, listener_factory make);
    agent_socket(agent_socket const&) = delete;
    agent_socket& operator=(agent_socket const&) = delete;

    /// Binds the socket (a stale file is replaced) and serves on it; SIGUSR1 calls it again.
    /// False when it cannot bind.
    bool listen();
    /// Closes the socket and every connection; released_marker() appears once this process
    /// holds no socket any more, which tells the server a checkpoint can be taken.
    void release();

private:
    boost::asio::awaitable<void> remove_when_closed();
    void arm_signal();

    boost::asio::any_io_executor ex_;
    std::filesystem::path path_;
    listener_factory make_;
    boost::asio::signal_set relisten_;
    std::mutex mutex_;
    std::shared_ptr<http_listener> current_;
    bool released_ = false;
    /// Stopped listeners: their sessions may still be unwinding.
    std::vector<std::shared_ptr<http_listener>> retired_;
};

}  // namespace prism_e2b::local::detail

#endif
