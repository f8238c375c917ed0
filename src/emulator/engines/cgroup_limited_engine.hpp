// What the engines whose sandboxes run in cgroups of their own share (namespaces,
// gvisor): the server's cgroup roots, a sandbox's cgroups with its template's
// limits, and the removal of what a sandbox that is not taken back left.
#ifndef PRISM_E2B_EMULATOR_ENGINES_CGROUP_LIMITED_ENGINE_HPP
#define PRISM_E2B_EMULATOR_ENGINES_CGROUP_LIMITED_ENGINE_HPP

#include "emulator/cgroups.hpp"
#include "emulator/engines/isolation_engine.hpp"

namespace prism_e2b::local::detail {

class cgroup_limited_engine : public isolation_engine {
public:
    explicit cgroup_limited_engine(cgroup_roots roots) : roots_(std::move(roots)) {}
    bool limits_sandboxes() const noexcept override { return true; }
    /// Its memory, pids and cpu cgroups under the server's roots, with sb.limits written.
    result<void> limit(sandbox& sb) const override;
    /// The server's roots go, with whatever is still in them.
    void stop() override;

protected:
    /// Removes the cgroups a sandbox left that is not taken back (it boots again in new ones).
    static void remove_left_cgroups(sandbox_remains const& left);

private:
    cgroup_roots roots_;
};

}  // namespace prism_e2b::local::detail

#endif
