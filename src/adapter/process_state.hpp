// The I/O side of one remote process followed by the adapter: its event
// reader and its handle. Its lifecycle lives in the sandbox's fsm (process_fsm);
// this code performs the actions the fsm returns.
#ifndef PRISM_E2B_ADAPTER_PROCESS_STATE_HPP
#define PRISM_E2B_ADAPTER_PROCESS_STATE_HPP

#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/process.hpp>

#include "adapter/process_fsm.hpp"
#include "adapter/sandbox_core.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <memory>
#include <optional>
#include <string>

namespace prism_e2b::detail {

/// Thread safety: `reader_cancel` is touched only on the sandbox's strand;
/// the rest is immutable once the state is shared. Public functions may be
/// called from any thread.
struct e2b_process_state : std::enable_shared_from_this<e2b_process_state> {
    e2b_process_state(std::shared_ptr<e2b_sandbox_core> c, std::uint32_t p, std::string r, output_callback cb);
    /// Leaves the sandbox's fsm.
    ~e2b_process_state();

    std::shared_ptr<e2b_sandbox_core> core;
    std::uint32_t pid;
    std::string ref;
    output_callback on_data;
    process_key key = 0;  ///< set by follow(), before any reader starts

    // -- strand only --
    std::shared_ptr<boost::asio::cancellation_signal> reader_cancel;

    /// Adds the process to the sandbox's fsm and starts the reader over
    /// `stream` on the sandbox's strand.
    static boost::asio::awaitable<void> follow(std::shared_ptr<e2b_process_state> self,
                                               std::unique_ptr<e2b::process_event_stream> stream);
    /// Performs what the fsm asked of this process (any thread).
    void perform(process_actions a);
    /// The fsm's view of this process, under the core's lock.
    process_fsm snapshot() const;

    /// Waits on the strand until the process is terminal or released; std::nullopt
    /// when `timeout` passed, errc::cancelled on per-operation cancellation.
    boost::asio::awaitable<result<std::optional<process_exit>>> wait_exit(
        std::optional<std::chrono::milliseconds> timeout);
};

/// The process_handle given to users.
std::unique_ptr<process_handle> make_process_handle(std::shared_ptr<e2b_process_state> state);

}  // namespace prism_e2b::detail

#endif
