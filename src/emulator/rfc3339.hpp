// RFC 3339 date-times: what the control plane writes (startedAt, endAt,
// log timestamps) and the startedAfter filter it reads.
#ifndef PRISM_E2B_EMULATOR_RFC3339_HPP
#define PRISM_E2B_EMULATOR_RFC3339_HPP

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace prism_e2b::local::detail {

/// RFC 3339 with milliseconds, UTC ("2026-01-02T03:04:05.678Z").
std::string rfc3339(std::chrono::system_clock::time_point tp);
/// An RFC 3339 date-time (section 5.6): "2026-01-02T03:04:05Z", with an optional
/// fraction of any length (cut to the clock's precision), 'T' / 't', 'Z' / 'z' or a
/// numeric offset ("+02:00", "-00:00"), and the leap second 23:59:60 UTC, read as the
/// second after 23:59:59. nullopt for anything else (other forms, out-of-range fields,
/// a day the month does not have, trailing text). A moment the clock cannot hold
/// (system_clock counts nanoseconds in 64 bits: 1677-09-21 to 2262-04-11) saturates
/// to time_point::min() / max(): it is still before / after every time point, which
/// is what the one caller, the startedAfter filter, compares with.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view s);

}  // namespace prism_e2b::local::detail

#endif
