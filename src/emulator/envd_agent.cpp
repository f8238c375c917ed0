// prism-e2b-envd: the sandbox's init and the envd agent it runs (envd_agent.hpp).
#include "emulator/envd_agent.hpp"

#include "emulator/engines/engine_factory.hpp"
#include "emulator/envd_agent_socket.hpp"
#include "emulator/http_listener.hpp"
#include "emulator/server_state.hpp"
#include "emulator/small_files.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <memory>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace json = boost::json;

json::object agent_config::to_json() const
{
    json::object o;
    o["sandboxID"] = sandbox_id;
    json::object env;
    for (auto const& [k, v] : env_vars) env[k] = v;
    o["envVars"] = std::move(env);
    o["defaultUser"] = default_user;
    o["maxFileBytes"] = max_file_bytes;
    o["envdVersion"] = envd_version;
    if (!listen_path.empty()) o["listenPath"] = listen_path;
    o["maxConnections"] = max_connections;
    return o;
}

agent_config agent_config::from_json(json::object const& o)
{
    agent_config c;
    if (auto const* v = o.if_contains("sandboxID"); v && v->is_string()) c.sandbox_id = std::string(v->as_string());
    if (auto const* v = o.if_contains("envVars"); v && v->is_object())
        for (auto const& [k, val] : v->as_object())
            if (val.is_string()) c.env_vars[std::string(k)] = std::string(val.as_string());
    if (auto const* v = o.if_contains("defaultUser"); v && v->is_string()) c.default_user = std::string(v->as_string());
    if (auto const* v = o.if_contains("maxFileBytes"); v && v->is_number())
        c.max_file_bytes = v->to_number<std::size_t>();
    if (auto const* v = o.if_contains("envdVersion"); v && v->is_string()) c.envd_version = std::string(v->as_string());
    if (auto const* v = o.if_contains("listenPath"); v && v->is_string()) c.listen_path = std::string(v->as_string());
    if (auto const* v = o.if_contains("maxConnections"); v && v->is_number())
        c.max_connections = std::max<std::size_t>(1, v->to_number<std::size_t>());
    return c;
}

namespace {

asio::awaitable<void> agent_dispatch(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb, agent_socket* own,
                                     http_request req, response_sink& sink)
{
    // An injected stream cut travels with the request it is for (the server's fault injector armed it).
    if (auto cut = req.header(agent_cut_header); !cut.empty())
        st->faults.cut_next_streams(static_cast<std::size_t>(std::strtoull(std::string(cut).c_str(), nullptr, 10)), 1);
    if (req.path == agent_stats_path) {
        co_await sink.send(exec_counts(*sb));
    } else if (req.path == agent_release_path && own) {
        http_response r;
        r.status = 204;
        r.content_type.clear();
        co_await sink.send(std::move(r));
        own->release();
    } else {
        co_await handle_envd(std::move(st), std::move(sb), std::move(req), sink);
    }
}

/// gVisor engine, after a restore: the sandbox this agent serves now (agent_reconfigure_file).
/// A snapshot restored as a new sandbox gets that sandbox's id, env vars and default user; its
/// processes, restored from memory, keep theirs. Runs while no connection is served (the socket
/// was released for the checkpoint), so nothing reads these fields meanwhile.
void adopt_new_config(server_state& st, std::shared_ptr<sandbox> const& sb, std::filesystem::path const& file)
{
    auto const text = read_small_file(file.string());
    if (text.empty()) return;
    ::unlink(file.c_str());
    boost::system::error_code jec;
    auto parsed = json::parse(text, jec);
    if (jec || !parsed.is_object()) return;
    auto const cfg = agent_config::from_json(parsed.as_object());
    if (!cfg.sandbox_id.empty() && cfg.sandbox_id != sb->id) {
        std::lock_guard lk(st.mutex);
        st.sandboxes.erase(sb->id);
        sb->id = cfg.sandbox_id;
        st.sandboxes[sb->id] = sb;
    }
    sb->env_vars = cfg.env_vars;
    sb->default_user = cfg.default_user;
    st.opts.max_file_bytes = cfg.max_file_bytes;
}

/// The serving agent: the envd handlers on this sandbox's "/" (never returns).
int serve(agent_config const& cfg)
{
    ::signal(SIGPIPE, SIG_IGN);
    asio::io_context ioc;
    auto st = std::make_shared<server_state>();
    st->ex = ioc.get_executor();
    st->opts.max_file_bytes = cfg.max_file_bytes;
    st->opts.envd_version = cfg.envd_version;
    st->engine = engine_inside_sandbox();
    auto sb = std::make_shared<sandbox>();
    sb->id = cfg.sandbox_id;
    sb->root = "/";
    sb->root_fd = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    sb->isolation = std::string(st->engine->name());
    sb->env_vars = cfg.env_vars;
    sb->default_user = cfg.default_user;
    sb->started_at = std::chrono::system_clock::now();
    st->sandboxes[sb->id] = sb;

    auto make_listener = [st, sb, max_connections = cfg.max_connections](agent_socket* own) {
        return std::make_unique<http_listener>(
            st->ex,
            [st, sb, own](http_request req, response_sink& sink) {
                return agent_dispatch(st, sb, own, std::move(req), sink);
            },
            [st](http_request const& head) {
                head_verdict v;
                v.body_limit = head.method == "POST" && head.path == "/files" ? st->opts.max_file_bytes : 1u << 20;
                return v;
            },
            listener_limits{max_connections, std::size_t{1} << 30, std::chrono::seconds(10), std::chrono::hours(24)},
            log_sink{});
    };
    std::unique_ptr<http_listener> inherited;
    std::unique_ptr<agent_socket> own;
    if (cfg.listen_path.empty()) {
        inherited = make_listener(nullptr);
        ::fcntl(agent_listen_fd, F_SETFD, FD_CLOEXEC);
        if (!inherited->adopt(agent_listen_fd)) return 1;
    } else {
        // Each bind (after a restore) first takes the config the server may have written for it.
        auto adopting = [st, sb, make_listener, file = agent_reconfigure_file(cfg.listen_path)](agent_socket* s) {
            adopt_new_config(*st, sb, file);
            return make_listener(s);
        };
        own = std::make_unique<agent_socket>(st->ex, cfg.listen_path, std::move(adopting));
        if (!own->listen()) return 1;
    }
    auto work = asio::make_work_guard(ioc);
    // Threads are created now: under a fork bomb the pids cgroup has no room for new ones.
    std::thread second([&ioc] { ioc.run(); });
    ioc.run();
    second.join();
    return 0;
}

std::string read_to_eof(int fd)
{
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t const n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

/// The serving agent's pid, for the init's SIGUSR1 forwarding (gVisor: bind the socket again).
std::atomic<pid_t> serving_agent{0};

void forward_to_agent(int sig)
{
    if (pid_t const p = serving_agent.load(); p > 0) ::kill(p, sig);
}

/// pid 1 of the sandbox: reaps every orphan, and keeps one serving agent alive.
[[noreturn]] void run_init()
{
    struct sigaction fwd {};
    fwd.sa_handler = forward_to_agent;
    ::sigaction(SIGUSR1, &fwd, nullptr);
    boost::system::error_code jec;
    auto parsed = json::parse(read_to_eof(agent_config_fd), jec);
    agent_config const cfg = !jec && parsed.is_object() ? agent_config::from_json(parsed.as_object()) : agent_config{};
    int const null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) ::dup2(null_fd, agent_config_fd);
    for (;;) {
        auto const started = std::chrono::steady_clock::now();
        pid_t const agent = ::fork();
        if (agent == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            ::_exit(serve(cfg));
        }
        serving_agent = agent;
        for (;;) {
            pid_t const p = ::waitpid(-1, nullptr, 0);
            if (p == agent || (p < 0 && errno == ECHILD) || agent < 0) break;
        }
        // Killed (an OOM kill, say): a new agent serves the sandbox; its processes keep
        // running but are no longer known to envd, as after envd restarts in E2B.
        if (std::chrono::steady_clock::now() - started < std::chrono::seconds(1))
            std::this_thread::sleep_for(std::chrono::seconds(1));
    }
}

}  // namespace

int envd_agent_main(int argc, char** argv)
{
    if (argc >= 2 && std::string_view(argv[1]) == "init") run_init();
    static char const usage[] =
        "prism-e2b-envd is started by prism-e2b-local as the init of a sandbox (namespaces engine).\n";
    ssize_t const n = ::write(2, usage, sizeof usage - 1);
    (void)n;
    return 2;
}

}  // namespace prism_e2b::local::detail
