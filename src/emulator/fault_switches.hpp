// The server's fault switches: what tests arm through local::fault_injector
// (and the admin routes), and what the routes consume while serving.
#ifndef PRISM_E2B_EMULATOR_FAULT_SWITCHES_HPP
#define PRISM_E2B_EMULATOR_FAULT_SWITCHES_HPP

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace prism_e2b::local::detail {

/// Thread safety: every member may be called from any thread (one mutex).
class fault_switches {
public:
    // -- armed by tests (fault_injector documents each) ----------------------
    void fail_next_pauses(unsigned count);
    void throttle_next_creates(unsigned count, std::chrono::seconds retry_after);
    void add_latency(std::string route_prefix, std::chrono::milliseconds delay);
    void cut_next_streams(std::size_t after_bytes, unsigned count);
    void kill_sandbox_during_exec(std::string sandbox_id, std::chrono::milliseconds after);
    void reset();

    // -- consumed by the server ------------------------------------------------
    bool take_pause_failure();  ///< true when this pause must fail (consumes one)
    /// Returns the Retry-After seconds when this create must be throttled.
    std::optional<std::chrono::seconds> take_create_throttle();
    /// The delay for a request to `path` (zero: none).
    std::chrono::milliseconds latency_for(std::string_view path) const;
    /// Returns the byte budget when this stream must be cut.
    std::optional<std::size_t> take_stream_cut();
    /// Returns the delay when a kill is armed for this sandbox (disarms it).
    std::optional<std::chrono::milliseconds> take_kill_during_exec(std::string const& sandbox_id);

private:
    mutable std::mutex mutex_;
    unsigned pause_failures_ = 0;
    unsigned create_throttles_ = 0;
    std::chrono::seconds retry_after_{1};
    std::map<std::string, std::chrono::milliseconds> latency_;
    unsigned stream_cuts_ = 0;
    std::size_t cut_after_ = 0;
    std::map<std::string, std::chrono::milliseconds> kills_;
};

}  // namespace prism_e2b::local::detail

#endif
