// The agent's engine (in_sandbox_engine.hpp).
#include "emulator/engines/in_sandbox/in_sandbox_engine.hpp"

#include "emulator/os_users.hpp"
#include "emulator/process_runner.hpp"

#include <unistd.h>

namespace prism_e2b::local::detail {

namespace {

class in_sandbox_engine final : public isolation_engine {
public:
    std::string_view name() const noexcept override { return "agent"; }
    sandbox_capabilities capabilities(bool) const override { return {}; }  // the server's engine attests
    bool own_mount_namespace() const noexcept override { return true; }

    void place(server_state const&, sandbox const&, spawn_spec& spec, std::string const& cwd,
               os_user const& user) const override
    {
        spec.chdir_to = cwd;
        if (::geteuid() == 0) {  // rootless sandboxes: the agent's own (only) user
            spec.uid = user.uid;
            spec.gid = user.gid;
        }
    }
};

}  // namespace

std::unique_ptr<isolation_engine> make_in_sandbox_engine() { return std::make_unique<in_sandbox_engine>(); }

}  // namespace prism_e2b::local::detail
