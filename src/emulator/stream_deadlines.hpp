// The timing headers of a streaming envd call (Connect-Timeout-Ms,
// Keepalive-Ping-Interval) and when its loop wakes next.
#ifndef PRISM_E2B_EMULATOR_STREAM_DEADLINES_HPP
#define PRISM_E2B_EMULATOR_STREAM_DEADLINES_HPP

#include "emulator/http_message.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace prism_e2b::local::detail {

/// A positive decimal header (at most 12 digits) times `scale` milliseconds, e.g.
/// Connect-Timeout-Ms (scale 1) or Keepalive-Ping-Interval in seconds (scale 1000).
std::optional<std::chrono::milliseconds> header_ms(http_request const& req, std::string_view name, std::int64_t scale);
/// When a server-streaming loop wakes next: its deadline, its next keepalive, or in an hour.
std::chrono::steady_clock::time_point stream_wake_time(
    std::chrono::steady_clock::time_point now, std::optional<std::chrono::steady_clock::time_point> deadline,
    std::optional<std::chrono::steady_clock::time_point> next_keepalive);

}  // namespace prism_e2b::local::detail

#endif
