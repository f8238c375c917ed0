// The lifecycle operations of e2b_sandbox (status, pause, resume, kill) and
// process start/attach: coroutines that perform the vendor calls the sandbox's
// fsm asks for and report the replies back to it.
#ifndef PRISM_E2B_ADAPTER_LIFECYCLE_HPP
#define PRISM_E2B_ADAPTER_LIFECYCLE_HPP

#include <prism_e2b/process.hpp>
#include <prism_e2b/sandbox.hpp>

#include "adapter/sandbox_core.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <string>

namespace prism_e2b::detail {

/// An absolute path without NUL, at most 4096 bytes (workdir, cwd).
result<void> validate_path(std::string const& p, char const* what);

boost::asio::awaitable<result<sandbox_status>> run_status(std::shared_ptr<e2b_sandbox_core> core);
boost::asio::awaitable<result<pause_outcome>> run_pause(std::shared_ptr<e2b_sandbox_core> core, pause_options opts);
/// Also what connect_e2b_sandbox(resume = true) runs: one envd-target merge rule.
boost::asio::awaitable<result<void>> run_resume(std::shared_ptr<e2b_sandbox_core> core);
boost::asio::awaitable<result<void>> run_kill(std::shared_ptr<e2b_sandbox_core> core);
boost::asio::awaitable<result<std::unique_ptr<process_handle>>> run_start_process(
    std::shared_ptr<e2b_sandbox_core> core, process_request req);
boost::asio::awaitable<result<std::unique_ptr<process_handle>>> run_attach_process(
    std::shared_ptr<e2b_sandbox_core> core, std::string ref, output_callback on_data);

}  // namespace prism_e2b::detail

#endif
