// The data of terminals in a sandbox: envd's process.Process with a
// pseudo-terminal (process.proto's PTY), as the official SDK's `sandbox.pty`.
// The operations (start, input, resize, kill, re-attach) are members of
// e2b::client (async_start_pty and the others).
#ifndef PRISM_E2B_E2B_PTY_HPP
#define PRISM_E2B_E2B_PTY_HPP

#include <prism_e2b/e2b/types.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace prism_e2b::e2b {

/// A terminal's size in character cells (process.PTY.Size); envd accepts 1..1000.
struct pty_size {
    std::uint32_t cols = 80;  ///< columns
    std::uint32_t rows = 24;  ///< rows
};

/// process.Process/Start with a pty.
struct pty_start_params {
    /// What runs on the terminal; the official SDK's default is a login shell.
    process_config process{"/bin/bash", {"-i", "-l"}, {}, std::nullopt};
    pty_size size;                    ///< the terminal's initial size
    std::optional<std::string> tag;   ///< a tag to find the process by later
    std::optional<std::string> user;  ///< Authorization: Basic base64("user:")
    /// Connect-Timeout-Ms; 0 (the default) sends none: a terminal lives as long as its shell.
    std::chrono::milliseconds timeout{0};
};

/// The stream of a terminal's events: data_event with stream_kind::pty, then end_event.
using pty_stream = std::unique_ptr<process_event_stream>;

}  // namespace prism_e2b::e2b

#endif
