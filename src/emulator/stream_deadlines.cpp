#include "emulator/stream_deadlines.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace prism_e2b::local::detail {

namespace {

/// A positive decimal header (at most 12 digits) times `scale` milliseconds.
std::optional<std::chrono::milliseconds> header_ms(http_request const& req, std::string_view name, std::int64_t scale)
{
    auto v = req.header(name);
    if (v.empty() || v.size() > 12) return std::nullopt;
    std::int64_t n = 0;
    for (char c : v) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + (c - '0');
    }
    if (n <= 0) return std::nullopt;
    return std::chrono::milliseconds(n * scale);
}

}  // namespace

stream_timing read_stream_timing(http_request const& req, std::chrono::steady_clock::time_point call_start)
{
    stream_timing t;
    if (auto const timeout = header_ms(req, "connect-timeout-ms", 1)) t.deadline = call_start + *timeout;
    t.keepalive = header_ms(req, "keepalive-ping-interval", 1000);
    return t;
}

std::chrono::steady_clock::time_point stream_wake_time(
    std::chrono::steady_clock::time_point now, std::optional<std::chrono::steady_clock::time_point> deadline,
    std::optional<std::chrono::steady_clock::time_point> next_keepalive)
{
    auto wake = now + std::chrono::hours(1);
    if (deadline) wake = std::min(wake, *deadline);
    if (next_keepalive) wake = std::min(wake, *next_keepalive);
    return wake;
}

}  // namespace prism_e2b::local::detail
