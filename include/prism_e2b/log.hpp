// Logging seam: the library calls a host-provided sink with already-redacted text.
#ifndef PRISM_E2B_LOG_HPP
#define PRISM_E2B_LOG_HPP

#include <prism_e2b/export.hpp>

#include <functional>
#include <string_view>

namespace prism_e2b {

enum class log_level { debug, info, warning, error };

/// Receives one log line. The library redacts every line (secret_redactor::global())
/// before calling the sink, so a sink may write it anywhere. May be called from any
/// thread of the io_context; the sink must be thread-safe.
using log_sink = std::function<void(log_level level, std::string_view line)>;

/// Redacts `line` and passes it to `sink` (no-op when the sink is empty).
PRISM_E2B_API void log_redacted(log_sink const& sink, log_level level, std::string_view line);

}  // namespace prism_e2b

#endif
