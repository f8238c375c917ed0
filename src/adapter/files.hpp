// The files() capability of e2b_sandbox: envd's files and filesystem calls on
// the sandbox's own envd target, behind the workspace rules.
#ifndef PRISM_E2B_ADAPTER_FILES_HPP
#define PRISM_E2B_ADAPTER_FILES_HPP

#include <prism_e2b/sandbox_files.hpp>

#include "adapter/sandbox_core.hpp"

#include <memory>

namespace prism_e2b::detail {

/// The sandbox_files of one sandbox; it shares the sandbox's core.
std::unique_ptr<sandbox_files> make_e2b_files(std::shared_ptr<e2b_sandbox_core> core);

}  // namespace prism_e2b::detail

#endif
