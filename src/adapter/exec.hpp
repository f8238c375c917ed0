// exec_file under the governor: one remote process per command, streamed to
// the end, stopped (SIGKILL) on timeout, cancellation and output overflow.
#ifndef PRISM_E2B_ADAPTER_EXEC_HPP
#define PRISM_E2B_ADAPTER_EXEC_HPP

#include <prism_e2b/sandbox.hpp>

#include "adapter/sandbox_core.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <string>

namespace prism_e2b::detail {

/// Margin added to an exec's timeout for envd's Connect-Timeout-Ms: envd kills
/// the process at that deadline, so ours must fire first and report timed_out.
inline constexpr std::chrono::milliseconds exec_deadline_margin{30000};

/// A non-secret, unique process tag ("<prefix>-<random>-<n>"): lets us signal a
/// process whose start stream broke before we learnt its pid.
std::string make_process_tag(char const* prefix);

/// The `user` of an exec, process or terminal request: absent (the backend's
/// default), or 1..64 bytes without control characters and without ':' (it
/// travels as "user:" in envd's Basic authorization). Errors: invalid_argument.
result<void> validate_user(std::optional<std::string> const& user, char const* operation);

boost::asio::awaitable<result<exec_result>> run_exec(std::shared_ptr<e2b_sandbox_core> core, exec_file_request req);

}  // namespace prism_e2b::detail

#endif
