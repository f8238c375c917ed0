// prism_e2b::local::server: start/stop, capability probing (mount namespace,
// cgroup freezer), request routing between the control plane, envd and the
// admin routes, the expiry reaper.
#include <prism_e2b/local_server.hpp>
#include <prism_e2b/redactor.hpp>

#include "emulator/engines/engine_factory.hpp"
#include "emulator/envd_agent.hpp"
#include "emulator/envd_proxy.hpp"
#include "emulator/http_listener.hpp"
#include "emulator/ledger.hpp"
#include "emulator/sandbox_fs.hpp"
#include "emulator/sandbox_network.hpp"
#include "emulator/server_state.hpp"
#include "emulator/signed_url.hpp"
#include "emulator/temp_state_dirs.hpp"
#include "emulator/use_nothrow.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace prism_e2b::local {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace detail;

namespace {

/// The cgroup v1 freezer hierarchy, if mounted and writable. Also removes what
/// servers that died without stop() left behind.
std::string probe_freezer(std::string const& state_dir)
{
    std::string const dir = create_server_cgroup("/sys/fs/cgroup/freezer", "prism-e2b-", remove_cgroup_tree, state_dir);
    struct stat st {};
    if (dir.empty()) return {};
    if (::stat((dir + "/freezer.state").c_str(), &st) != 0) {
        ::rmdir(dir.c_str());
        return {};
    }
    return dir;
}

/// passwd and group files for the mount namespaces: "user" (uid 1000) first, so
/// it names uid 1000 even when the host calls it something else, then the host's entries.
void write_account_files(server_state& st)
{
    auto const dir = st.state_dir / "etc";
    std::error_code ec;
    fs::create_directories(dir, ec);
    auto copy_with = [&](char const* host, std::string const& first, fs::path const& out) {
        std::ifstream in(host);
        std::ofstream os(out, std::ios::trunc);
        os << first << "\n";
        std::string line;
        while (std::getline(in, line))
            if (line.rfind("user:", 0) != 0) os << line << "\n";
        return static_cast<bool>(os);
    };
    if (copy_with("/etc/passwd", "user:x:1000:1000:user:/home/user:/bin/bash", dir / "passwd") &&
        copy_with("/etc/group", "user:x:1000:", dir / "group")) {
        ::chmod((dir / "passwd").c_str(), 0644);
        ::chmod((dir / "group").c_str(), 0644);
        st.passwd_file = (dir / "passwd").string();
        st.group_file = (dir / "group").string();
    }
}

/// "49983-<id>.<domain>" -> id.
std::string sandbox_id_from_host(std::string_view host)
{
    if (host.substr(0, 6) != "49983-") return {};
    auto const dot = host.find('.');
    if (dot == std::string_view::npos || dot <= 6) return {};
    return std::string(host.substr(6, dot - 6));
}

bool is_rpc_path(std::string_view path)
{
    return path.rfind("/process.Process/", 0) == 0 || path.rfind("/filesystem.Filesystem/", 0) == 0;
}

}  // namespace

struct server::impl {
    std::shared_ptr<server_state> st;
    std::unique_ptr<http_listener> listener;
    std::uint16_t port = 0;
    bool started = false;
    bool stopped = false;
    std::shared_ptr<asio::steady_timer> reaper;
    std::unique_ptr<fault_injector> faults;  ///< the public face of st->faults
};

server::server(asio::any_io_executor ex, server_options opts) : impl_(std::make_shared<impl>())
{
    impl_->st = std::make_shared<server_state>();
    impl_->st->ex = ex;
    impl_->st->opts = std::move(opts);
    impl_->faults.reset(new fault_injector(impl_->st->faults));  // private constructor: no make_unique
}

server::~server() { stop(); }

namespace {

/// The sandbox a request is for: the E2b-Sandbox-Id header, the Host `49983-<id>.<domain>`, or,
/// for a signed /files URL that names neither (the SDK's uploadUrl/downloadUrl against one
/// sandboxUrl), the sandbox whose access token signed it. Empty: the control plane.
std::string sandbox_id_of(server_state const& st, http_request const& req)
{
    std::string id(req.header("e2b-sandbox-id"));
    if (id.empty()) id = sandbox_id_from_host(req.header("host"));
    if (id.empty() && req.path == "/files" && has_file_signature(req)) {
        std::vector<std::shared_ptr<sandbox>> all;
        {
            std::lock_guard lk(st.mutex);
            for (auto const& [sid, sb] : st.sandboxes) all.push_back(sb);
        }
        // The expiry is judged later, by refusal(): here only whose signature it is.
        auto const any_time = std::chrono::system_clock::time_point{};
        for (auto const& sb : all)
            if (!check_file_signature(req, sb->access_token, any_time)) return sb->id;
    }
    return id;
}

/// The credential checks every request passes, judged from its head alone (the
/// listener calls it before reading a body; dispatch again, as a sandbox may have
/// been paused meanwhile). nullopt: go ahead.
std::optional<http_response> refusal(server_state& st, http_request const& req)
{
    // The volume-content API answers to the volume's own token, never to the API key.
    if (req.path.rfind("/volumecontent/", 0) == 0) return volume_content_refusal(st, req);
    std::string const id = sandbox_id_of(st, req);
    if (id.empty()) {
        if (req.path.rfind("/admin/", 0) == 0) {
            if (st.opts.admin_token.empty()) return rest_error(404, "admin routes are disabled");
            if (!secure_equals(req.header("x-admin-token"), st.opts.admin_token))
                return rest_error(401, "invalid or missing admin token");
            return std::nullopt;
        }
        if (req.path == "/health" && req.method == "GET") return std::nullopt;
        if (!secure_equals(req.header("x-api-key"), st.opts.api_key))
            return rest_error(401, req.has_header("x-api-key") ? "Invalid API key" : "missing X-API-KEY header");
        return std::nullopt;
    }
    // envd. A sandbox that is gone or paused answers as E2B's proxy does: 502.
    bool const rpc = is_rpc_path(req.path);
    auto not_running = [&](std::string const& msg) {
        if (rpc) {
            auto r = connect_error("unavailable", msg);
            r.status = 502;
            return r;
        }
        return rest_error(502, msg);
    };
    auto sb = st.find(id);
    if (!sb) return not_running("sandbox " + id + " is not running or does not exist");
    std::string token;
    {
        std::lock_guard lk(sb->mutex);
        if (sb->gone || sb->state != sandbox_state::running)
            return not_running("sandbox " + id + (sb->gone ? " is not running or does not exist" : " is paused"));
        token = sb->access_token;
    }
    if (req.path == "/health" && req.method == "GET") return std::nullopt;
    if (req.path == "/files" && !req.has_header("x-access-token") && has_file_signature(req)) {
        if (auto why = check_file_signature(req, token, std::chrono::system_clock::now())) return rest_error(401, *why);
        return std::nullopt;  // a signed URL of this sandbox's access token
    }
    if (!secure_equals(req.header("x-access-token"), token)) {
        if (rpc) return connect_error("unauthenticated", "invalid or missing access token");
        return rest_error(401, "invalid or missing access token");
    }
    return std::nullopt;
}

}  // namespace

asio::awaitable<void> detail::dispatch(std::shared_ptr<server_state> st, http_request req, response_sink& sink)
{
    if (auto delay = st->faults.latency_for(req.path); delay.count() > 0) {
        asio::steady_timer t(co_await asio::this_coro::executor);
        t.expires_after(delay);
        co_await t.async_wait(use_nothrow);
    }
    if (auto refused = refusal(*st, req)) {
        co_await sink.send(std::move(*refused));
        co_return;
    }
    if (req.path.rfind("/volumecontent/", 0) == 0) {
        co_await handle_volume_content(st, std::move(req), sink);
        co_return;
    }
    std::string const id = sandbox_id_of(*st, req);
    if (id.empty()) {
        if (req.path.rfind("/admin/", 0) == 0)
            co_await handle_admin(st, std::move(req), sink);
        else
            co_await handle_control(st, std::move(req), sink);
        co_return;
    }
    auto sb = st->find(id);
    if (!sb) {  // killed since refusal() looked
        co_await sink.send(rest_error(502, "sandbox " + id + " is not running or does not exist"));
        co_return;
    }
    if (sb->agent) {  // namespaces engine: envd runs inside the sandbox
        co_await proxy_to_agent(st, sb, std::move(req), sink);
        co_return;
    }
    co_await handle_envd(st, sb, std::move(req), sink);
}

result<void> server::start()
{
    auto& i = *impl_;
    if (i.started) return error(errc::invalid_argument, "server already started", {"start"});
    auto& st = *i.st;
    if (st.opts.api_key.empty()) return error(errc::invalid_argument, "server_options::api_key is required", {"start"});
    secret_redactor::global().add(st.opts.api_key);
    if (!st.opts.admin_token.empty()) secret_redactor::global().add(st.opts.admin_token);

    std::error_code ec;
    if (st.opts.state_dir.empty()) {
        auto const tmp = fs::temp_directory_path(ec);
        // What servers killed before their stop left behind (not their sandboxes: those stay).
        sweep_stale_temp_state_dirs(tmp, std::chrono::minutes(1));
        std::string tmpl = (tmp / (std::string(temp_state_dir_prefix) + "XXXXXX")).string();
        if (!::mkdtemp(tmpl.data()))
            return error(errc::server_error, "cannot create a temporary state directory", {"start"});
        st.state_dir = tmpl;
        st.owns_state_dir = true;
    } else {
        st.state_dir = fs::absolute(st.opts.state_dir, ec);
        fs::create_directories(st.state_dir, ec);
        if (ec) return error(errc::invalid_argument, "cannot create the state directory: " + ec.message(), {"start"});
    }
    fs::create_directories(st.state_dir / "sandboxes", ec);
    // One server per state dir: a second one would reap the first one's sandboxes.
    st.state_lock = unique_fd(::open((st.state_dir / "server.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!st.state_lock || ::flock(st.state_lock.get(), LOCK_EX | LOCK_NB) != 0) {
        st.state_lock = unique_fd();
        return error(errc::conflict, "another prism-e2b-local uses the state directory " + st.state_dir.string(),
                     {"start"});
    }

    // Cgroup roots of a server that died on this state dir, holding sandboxes restore_from_ledger()
    // adopts: this server removes them when it stops.
    for (auto const& rec : ledger_read_all(ledger_dir(st.state_dir))) {
        std::vector<std::string> recorded;
        if (auto const* v = rec.if_contains("cgroups"); v && v->is_array())
            for (auto const& d : v->as_array())
                if (d.is_string()) recorded.emplace_back(d.as_string());
        if (auto const* v = rec.if_contains("freezerCgroup"); v && v->is_string() && !v->as_string().empty())
            recorded.emplace_back(v->as_string());
        for (auto const& d : recorded) {
            auto const root = fs::path(d).parent_path().string();
            if (!st.inherited_cgroup_roots.count(root)) st.inherited_cgroup_roots[root] = take_over_cgroup_root(root);
        }
    }
    // Only a state dir that outlives this server can take its sandboxes back after a crash.
    std::string const owner = st.owns_state_dir ? std::string() : st.state_dir.string();
    auto engine = start_isolation_engine({st.opts.engine, st.opts.isolate, st.state_dir, owner, st.opts.memory_tiers});
    if (!engine) return engine.error();
    st.engine = std::move(*engine);
    // Engines that run sandbox code under host ids (not mapped ones) need to traverse to the
    // sandboxes' directories; with namespaces they stay the server's alone.
    for (auto const& d : {st.state_dir, st.state_dir / "sandboxes"})
        if (st.engine->host_ids_reach_sandbox_files())
            ::chmod(d.c_str(), 0711);
        else if (d != st.state_dir)
            ::chmod(d.c_str(), 0700);
    if (st.engine->limits_sandboxes())
        st.ns_defaults = {std::max(1u, st.opts.sandbox_cpu_count),
                          std::max<std::uint32_t>(16, st.opts.sandbox_memory_mb),
                          std::max<std::uint32_t>(8, st.opts.sandbox_max_pids)};
    write_account_files(st);  // bound over /etc/passwd and /etc/group by the engines with a mount namespace
    if (st.opts.sandbox_disk_mb) {
        st.disk_quota_problem = sandbox_disk_unavailable();
        if (st.disk_quota_problem.empty())
            st.disk_images = std::make_unique<disk_image_cache>(st.state_dir / "disk-images");
        else if (::geteuid() == 0)
            st.log(log_level::warning, "prism-e2b-local: no disk quota (" + st.disk_quota_problem + ")");
    } else {
        st.disk_quota_problem = "sandbox_disk_mb is 0";
    }
    st.freezer_root = ::geteuid() == 0 && st.opts.cgroup_freezer ? probe_freezer(owner) : std::string();
    st.freezer_available = !st.freezer_root.empty();
    // Templates are the operator's files; snapshots are the server's (they outlive restarts).
    st.templates_dir = st.state_dir / "templates";
    fs::create_directories(st.templates_dir, ec);
    st.snapshots.open(st.state_dir / "snapshots");
    st.volumes.open(st.state_dir / "volumes");
    // What a server that died without stop() left: its sandboxes come back.
    st.ledger = ledger_dir(st.state_dir);
    st.restore_from_ledger();

    auto stp = i.st;
    listener_limits limits;
    limits.max_connections = st.opts.max_connections;
    limits.max_buffered_bytes = st.opts.max_buffered_bytes;
    limits.header_timeout = st.opts.header_timeout;
    limits.idle_timeout = st.opts.idle_timeout;
    limits.tls_cert_file = st.opts.tls_cert_file;
    limits.tls_key_file = st.opts.tls_key_file;
    i.listener = std::make_unique<http_listener>(
        st.ex, [stp](http_request req, response_sink& sink) { return dispatch(stp, std::move(req), sink); },
        [stp](http_request const& head) {
            head_verdict v;
            bool const upload = (head.method == "POST" && head.path == "/files") ||
                                (head.method == "PUT" && head.path.rfind("/volumecontent/", 0) == 0);
            v.body_limit = upload ? stp->opts.max_file_bytes : 1u << 20;
            v.refuse = refusal(*stp, head);
            return v;
        },
        limits, st.opts.logger);
    auto port = i.listener->start(st.opts.listen_address, st.opts.port);
    if (!port) return port.error();
    i.port = *port;
    i.started = true;

    // On a strand of its own: stop() cancels the timer from another thread of the pool.
    auto const reaper_strand = asio::make_strand(st.ex);
    i.reaper = std::make_shared<asio::steady_timer>(reaper_strand);
    asio::co_spawn(
        reaper_strand,
        [stp, timer = i.reaper]() -> asio::awaitable<void> {
            while (!stp->stopping) {
                timer->expires_after(std::chrono::milliseconds(100));
                auto [ec] = co_await timer->async_wait(use_nothrow);
                if (ec || stp->stopping) break;
                stp->reap_expired();
            }
        },
        asio::detached);
    st.log(log_level::info, "prism-e2b-local: listening on " + api_url() + " (isolation: " + isolation() +
                                ", freezer: " + (st.freezer_available ? "cgroup-v1" : "sigstop") + ")");
    return result<void>{};
}

void server::stop()
{
    auto& i = *impl_;
    if (!i.started || i.stopped) return;
    i.stopped = true;
    auto& st = *i.st;
    st.stopping = true;
    if (i.reaper) asio::post(i.reaper->get_executor(), [t = i.reaper] { t->cancel(); });
    i.listener->stop();
    st.stop_all();
    if (!st.freezer_root.empty()) remove_cgroup_tree(st.freezer_root);
    st.engine->stop();
    for (auto const& [recorded, now] : st.inherited_cgroup_roots) remove_cgroup_tree(now);
    if (st.owns_state_dir) remove_tree(st.state_dir.string());
    st.state_lock = unique_fd();
}

std::uint16_t server::port() const noexcept { return impl_->port; }

std::string server::api_url() const
{
    auto const& addr = impl_->st->opts.listen_address;
    std::string host = (addr == "0.0.0.0" || addr.empty()) ? "127.0.0.1" : addr;
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    std::string const scheme = impl_->st->opts.tls_cert_file.empty() ? "http://" : "https://";
    return scheme + host + ":" + std::to_string(impl_->port);
}

std::string server::sandbox_url() const { return api_url(); }

fault_injector& server::faults() noexcept { return *impl_->faults; }

std::uint32_t server::peak_concurrent_execs(std::string const& sandbox_id) const
{
    auto sb = impl_->st->find(sandbox_id);
    if (!sb) return 0;
    if (sb->agent) return agent_peak(*sb);
    std::lock_guard lk(sb->mutex);
    return sb->peak;
}

std::string server::isolation() const
{
    return impl_->st->engine ? std::string(impl_->st->engine->name()) : std::string("none");
}

sandbox_capabilities server::capabilities(bool allow_internet_access) const
{
    if (!impl_->st->engine) return sandbox_capabilities{};  // not started: nothing attested
    return impl_->st->engine->capabilities(allow_internet_access);
}

local::listener_stats server::listener_stats() const
{
    return impl_->listener ? impl_->listener->stats() : local::listener_stats{};
}

}  // namespace prism_e2b::local
