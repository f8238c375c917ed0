// The pty() capability of e2b_sandbox: terminals over the client's pty calls
// (e2b/pty.hpp) on the sandbox's own envd target.
#ifndef PRISM_E2B_ADAPTER_PTY_HPP
#define PRISM_E2B_ADAPTER_PTY_HPP

#include <prism_e2b/sandbox_pty.hpp>

#include "adapter/sandbox_core.hpp"

#include <memory>

namespace prism_e2b::detail {

/// The pty_capable of one sandbox; it shares the sandbox's core.
std::unique_ptr<pty_capable> make_e2b_pty(std::shared_ptr<e2b_sandbox_core> core);

}  // namespace prism_e2b::detail

#endif
