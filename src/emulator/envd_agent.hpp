// prism-e2b-envd, the agent that serves envd's protocol from inside a sandbox
// (namespaces engine). The sandbox's init (pid 1 of its pid namespace, in its
// user, mount, uts, ipc and network namespaces and its cgroups) is this
// program in "init" mode: it reaps orphans and runs the serving agent as its
// first child, starting it again should it die (an OOM kill, say). The serving
// agent runs the same envd handlers as the in-process engines (process.Process
// incl. PTY, filesystem.Filesystem incl. WatchDir, /files, /health) on the
// sandbox's own "/", over a Unix socket the server bound before the sandbox
// existed and proxies to (envd_proxy.hpp). The agent holds no secret: the
// access token is checked by the server before a request is forwarded.
#ifndef PRISM_E2B_EMULATOR_ENVD_AGENT_HPP
#define PRISM_E2B_EMULATOR_ENVD_AGENT_HPP

#include <boost/json/object.hpp>

#include <cstddef>
#include <map>
#include <string>

namespace prism_e2b::local::detail {

/// Descriptors the init is started with: the config (read to EOF) and the listening socket.
inline constexpr int agent_config_fd = 0;
inline constexpr int agent_listen_fd = 3;

/// What the server tells the agent (JSON on agent_config_fd).
struct agent_config {
    std::string sandbox_id;
    std::map<std::string, std::string> env_vars;
    std::string default_user = "user";  ///< the template's: who commands run as without Authorization
    std::size_t max_file_bytes = 64u << 20;
    std::string envd_version;
    /// gVisor engine: the agent binds this path itself (its container cannot inherit a host
    /// socket) and lets go of it for a checkpoint; empty: it serves on agent_listen_fd.
    std::string listen_path;
    /// Connections the agent serves at once. Every process stream holds one for its lifetime,
    /// so the server sizes it from the sandbox's pids limit: a sandbox never hits it first.
    std::size_t max_connections = 512;

    boost::json::object to_json() const;
    /// Missing fields keep their defaults.
    static agent_config from_json(boost::json::object const& o);
};

/// Route of the agent's own counters (not envd's protocol; the server strips it from client requests).
inline constexpr char const* agent_stats_path = "/_prism/agent-stats";
/// gVisor engine: the agent answers 204, closes its socket and every connection, and creates
/// the file "released" next to the socket once none is left (runsc cannot checkpoint a socket
/// bound on the host). SIGUSR1 (runsc kill, forwarded by the init) makes it bind the socket again.
inline constexpr char const* agent_release_path = "/_prism/release-socket";
/// Private header carrying an injected stream cut (fault_injector::cut_next_streams) to the agent.
inline constexpr char const* agent_cut_header = "x-prism-cut-stream-after";

/// The program's main: argv[1] "init" runs the init, "serve" the agent itself.
int envd_agent_main(int argc, char** argv);

}  // namespace prism_e2b::local::detail

#endif
