// cgroup_limited_engine.hpp.
#include "emulator/engines/cgroup_limited_engine.hpp"

#include "emulator/server_state.hpp"

namespace prism_e2b::local::detail {

result<void> cgroup_limited_engine::limit(sandbox& sb) const
{
    auto cgroups = create_sandbox_cgroups(roots_, sb.id, sb.limits);
    if (!cgroups) return cgroups.error();
    sb.limit_cgroups = std::move(*cgroups);
    return result<void>{};
}

void cgroup_limited_engine::stop()
{
    for (auto const& d : roots_.all()) remove_cgroup_tree(d);
}

void cgroup_limited_engine::remove_left_cgroups(sandbox_remains const& left)
{
    for (auto const& d : left.cgroups) remove_cgroup_tree(d);
    if (!left.freezer_cgroup.empty()) remove_cgroup_tree(left.freezer_cgroup);
}

}  // namespace prism_e2b::local::detail
