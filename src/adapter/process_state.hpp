// One remote process followed by the adapter: its event reader, its recorded
// exit and the waiters of wait(). Shared by the handle and the reader.
#ifndef PRISM_E2B_ADAPTER_PROCESS_STATE_HPP
#define PRISM_E2B_ADAPTER_PROCESS_STATE_HPP

#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/process.hpp>

#include "adapter/sandbox_core.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace prism_e2b::detail {

/// Maps an `end` event to the contract's exit: exited -> exit code; otherwise no
/// exit code (killed when a signal ended it or we asked for SIGKILL, else unknown).
process_exit map_end_event(e2b::end_event const& end, bool kill_requested);

/// Thread safety: every field below `strand` is touched only on `strand`.
/// Public functions may be called from any thread: they hop onto the strand.
struct e2b_process_state : std::enable_shared_from_this<e2b_process_state> {
    e2b_process_state(std::shared_ptr<e2b_sandbox_core> c, std::uint32_t p, std::string r, output_callback cb);

    std::shared_ptr<e2b_sandbox_core> core;
    std::uint32_t pid;
    std::string ref;
    output_callback on_data;
    boost::asio::strand<boost::asio::any_io_executor> strand;

    // -- strand only --
    std::optional<process_exit> exit;
    bool kill_requested = false;
    bool released = false;
    bool suspended = false;  ///< the stream broke because of a pause: re-attach on resume
    std::uint64_t reader_epoch = 0;
    std::shared_ptr<boost::asio::cancellation_signal> reader_cancel;
    std::vector<boost::asio::steady_timer*> waiters;

    /// Starts the background reader over `stream` (call on the strand). The
    /// reader is owned by this state and cancelled by stop_reader().
    void start_reader(std::unique_ptr<e2b::process_event_stream> stream, std::uint64_t epoch);
    /// Cancels the reader, if any (call on the strand).
    void stop_reader();
    /// Records the end once and wakes every waiter (call on the strand).
    void finish(process_exit e);

    // -- any thread --
    /// The sandbox was killed or rebooted: the process is gone.
    void on_gone(std::string why);
    /// The sandbox runs again after a memory pause (or a refused pause): re-attach
    /// a reader whose stream broke.
    void on_resumed();
    /// Re-attaches after a resume (on the strand; owned through reader_cancel).
    static boost::asio::awaitable<void> reattach(std::shared_ptr<e2b_process_state> self,
                                                 std::shared_ptr<boost::asio::cancellation_signal> sig);
    /// The handle went away without release(): stop following (process keeps running).
    void detach();

    /// Waits for the end on the strand; std::nullopt when `timeout` passed, error
    /// cancelled on per-operation cancellation.
    boost::asio::awaitable<result<std::optional<process_exit>>> wait_exit(
        std::optional<std::chrono::milliseconds> timeout);
};

/// The process_handle given to users.
std::unique_ptr<process_handle> make_process_handle(std::shared_ptr<e2b_process_state> state);

}  // namespace prism_e2b::detail

#endif
