// The `mount-namespace` engine (mount_namespace_engine.hpp).
#include "emulator/engines/mount_namespace/mount_namespace_engine.hpp"

#include "emulator/process_runner.hpp"
#include "emulator/server_state.hpp"

#include <cerrno>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;

namespace {

/// Can a child get its own mount namespace with the sandbox directories bound
/// over /workspace, /home/user and /tmp? Tried for real in a throw-away child.
bool probe_mount_namespace(fs::path const& probe_dir)
{
    std::error_code ec;
    for (char const* d : {"/workspace", "/home/user"})
        if (!fs::exists(d, ec) && (::mkdir(d, 0755) != 0 && errno != EEXIST)) return false;
    fs::create_directories(probe_dir, ec);
    std::string const src = probe_dir.string();
    pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) {
        // Raw exit_group: nothing in the child may run the host's (or a sanitizer's) exit hooks.
        int code = 0;
        if (::unshare(CLONE_NEWNS) != 0)
            code = 1;
        else if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
            code = 2;
        else if (::mount(src.c_str(), "/workspace", nullptr, MS_BIND | MS_REC, nullptr) != 0)
            code = 3;
        ::syscall(SYS_exit_group, code);
        ::_exit(code);  // not reached
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    fs::remove_all(probe_dir, ec);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

class mount_namespace_engine final : public isolation_engine {
public:
    std::string_view name() const noexcept override { return "mount-namespace"; }
    sandbox_capabilities capabilities(bool) const override
    {
        sandbox_capabilities c;  // its paths only: processes, users and network are the host's
        c.workspace_coherent = true;
        return c;
    }
    bool own_mount_namespace() const noexcept override { return true; }

    void place(server_state const& st, sandbox const& sb, spawn_spec& spec, std::string const& cwd,
               os_user const& user) const override
    {
        spec.chdir_to = cwd;
        spec.binds = {{(sb.root / "workspace").string(), "/workspace"},
                      {(sb.root / "home/user").string(), "/home/user"}};
        if (!st.passwd_file.empty()) {
            spec.binds.emplace_back(st.passwd_file, "/etc/passwd");
            spec.binds.emplace_back(st.group_file, "/etc/group");
        }
        spec.binds.emplace_back((sb.root / "tmp").string(), "/tmp");  // last: the sources may live under /tmp
        spec.uid = user.uid;  // the engine needs root: the user's ids are always set
        spec.gid = user.gid;
    }
};

}  // namespace

result<std::unique_ptr<isolation_engine>> start_mount_namespace_engine(fs::path const& probe_dir)
{
    if (::geteuid() != 0 || !probe_mount_namespace(probe_dir))
        return error(errc::invalid_argument, "the mount-namespace engine needs root and mount namespaces", {"start"});
    return std::unique_ptr<isolation_engine>(std::make_unique<mount_namespace_engine>());
}

}  // namespace prism_e2b::local::detail
