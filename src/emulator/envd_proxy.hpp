// The server's side of the envd agent (envd_agent.hpp): the Unix socket each
// sandbox's agent serves on, a small keep-alive pool of connections to it, and
// the proxy that forwards an authenticated envd request and relays the answer
// (streams chunk by chunk, both ends cut when the client goes), as E2B's proxy
// forwards to the envd inside each VM.
#ifndef PRISM_E2B_EMULATOR_ENVD_PROXY_HPP
#define PRISM_E2B_EMULATOR_ENVD_PROXY_HPP

#include <prism_e2b/error.hpp>

#include "emulator/http_message.hpp"
#include "emulator/sandbox_fs.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace prism_e2b::local::detail {

struct server_state;
struct sandbox;

/// A listening Unix socket at `path` (0600, any stale one replaced), close-on-exec.
/// Errors: invalid_argument for a path too long for a socket, server_error otherwise.
result<unique_fd> listen_agent_socket(std::filesystem::path const& path);

/// A blocking connect to the Unix socket at `path` (close-on-exec); invalid when the path is too
/// long for a socket or nobody accepts there.
unique_fd connect_unix(std::filesystem::path const& path);

/// One blocking GET of `target` from the agent at `path` (for the start-up probe, a
/// restart's liveness check and test counters); nullopt when it does not answer in time.
struct agent_reply {
    int status = 0;
    std::string body;
};
std::optional<agent_reply> agent_get(std::filesystem::path const& path, std::string const& target,
                                     std::chrono::milliseconds timeout);

/// The most execs that ran at once in sb (namespaces engine: its agent counts them). While
/// sb is frozen its agent cannot answer: then the count read when it was paused.
std::uint32_t agent_peak(sandbox& sb);
/// How many processes run in sb now, as its agent counts them (0 while sb is paused:
/// a frozen agent cannot answer, or when it does not answer).
std::uint32_t agent_running(sandbox& sb);

/// Idle keep-alive connections to one sandbox's agent. Thread safety: behind a mutex.
class agent_pool {
public:
    explicit agent_pool(std::filesystem::path socket_path) : path_(std::move(socket_path)) {}
    std::filesystem::path const& socket_path() const noexcept { return path_; }
    /// An idle connection (`reused` set), else none.
    std::optional<boost::asio::local::stream_protocol::socket> take(bool& reused);
    /// Keeps a connection whose last exchange completed, unless the agent was replaced since.
    void give_back(boost::asio::local::stream_protocol::socket s, std::uint64_t generation);
    /// Drops every idle connection (the agent was stopped or booted again).
    void reset();
    std::uint64_t generation() const;

private:
    std::filesystem::path path_;
    mutable std::mutex mutex_;
    std::vector<boost::asio::local::stream_protocol::socket> idle_;
    std::uint64_t generation_ = 0;
};

/// Forwards an envd request (credentials already checked by refusal()) to sb's agent
/// and relays its answer; 502 when the agent cannot be reached.
boost::asio::awaitable<void> proxy_to_agent(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                            http_request req, response_sink& sink);
/// The same without proxy_to_agent's route filter: for the server's own requests (the
/// agent's counters, agent_stats_path, for the admin routes).
boost::asio::awaitable<void> forward_to_agent(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                              http_request req, response_sink& sink);

}  // namespace prism_e2b::local::detail

#endif
