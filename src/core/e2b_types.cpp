// envd_target: what the envd client needs from a create/connect/list answer.
#include <prism_e2b/e2b/types.hpp>

namespace prism_e2b::e2b {

envd_target envd_target::from(sandbox_handle const& h)
{
    return {h.sandbox_id, h.envd_access_token, h.domain, h.envd_version};
}

envd_target envd_target::from(sandbox_info const& i)
{
    return {i.sandbox_id, i.envd_access_token, i.domain, i.envd_version};
}

}  // namespace prism_e2b::e2b
