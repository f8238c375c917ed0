// The timing of a streaming envd call, read once from its request head: the
// deadline Connect-Timeout-Ms sets from the call's start, and the keepalive
// interval Keepalive-Ping-Interval asks for; and when its loop wakes next.
#ifndef PRISM_E2B_EMULATOR_STREAM_DEADLINES_HPP
#define PRISM_E2B_EMULATOR_STREAM_DEADLINES_HPP

#include "emulator/http_message.hpp"

#include <chrono>
#include <optional>

namespace prism_e2b::local::detail {

/// What a streaming call asked for; each absent when its header is absent or malformed
/// (not a positive decimal of at most 12 digits), as envd ignores it then.
struct stream_timing {
    std::optional<std::chrono::steady_clock::time_point> deadline;  ///< call start + Connect-Timeout-Ms
    std::optional<std::chrono::milliseconds> keepalive;             ///< Keepalive-Ping-Interval (seconds)
};

/// The timing of the call `req`, which started at `call_start`. Read once per call: the
/// process's deadline kill and the stream's end use the same instant.
stream_timing read_stream_timing(http_request const& req, std::chrono::steady_clock::time_point call_start);

/// When a server-streaming loop wakes next: its deadline, its next keepalive, or in an hour.
std::chrono::steady_clock::time_point stream_wake_time(
    std::chrono::steady_clock::time_point now, std::optional<std::chrono::steady_clock::time_point> deadline,
    std::optional<std::chrono::steady_clock::time_point> next_keepalive);

}  // namespace prism_e2b::local::detail

#endif
