#include "emulator/stream_deadlines.hpp"

#include <algorithm>

namespace prism_e2b::local::detail {

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
