// The transport's one log line per request: method, origin, path (no query),
// status, duration, and what went wrong; redacted before it reaches the sink.
#ifndef PRISM_E2B_WIRE_TRANSPORT_LOG_HPP
#define PRISM_E2B_WIRE_TRANSPORT_LOG_HPP

#include <prism_e2b/log.hpp>

#include "wire/origin.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace prism_e2b::wire {

/// Logs at warning level for a failure or status >= 400, else info; nothing
/// without a sink. `status` 0 = no response.
void log_exchange(log_sink const& sink, std::string const& method, origin const& o, std::string const& target,
                  int status, std::chrono::steady_clock::time_point start, std::string_view extra);

}  // namespace prism_e2b::wire

#endif
