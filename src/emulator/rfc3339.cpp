#include "emulator/rfc3339.hpp"

#include <cstdint>
#include <cstdio>
#include <ctime>

namespace prism_e2b::local::detail {

std::string rfc3339(std::chrono::system_clock::time_point tp)
{
    auto const ms = std::chrono::duration_cast<std::chrono::milliseconds>(tp.time_since_epoch()).count();
    std::time_t const secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
    return buf;
}

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view s)
{
    using clock = std::chrono::system_clock;
    using period = clock::duration::period;
    static_assert(period::num == 1, "the clock counts fractions of a second");
    std::size_t i = 0;
    auto number = [&](std::size_t n) -> std::optional<int> {
        if (s.size() - i < n) return std::nullopt;
        int v = 0;
        for (std::size_t k = 0; k < n; ++k, ++i) {
            if (s[i] < '0' || s[i] > '9') return std::nullopt;
            v = v * 10 + (s[i] - '0');
        }
        return v;
    };
    auto literal = [&](std::string_view one_of) {
        if (i == s.size() || one_of.find(s[i]) == std::string_view::npos) return false;
        ++i;
        return true;
    };
    auto const y = number(4);
    if (!y || !literal("-")) return std::nullopt;
    auto const mo = number(2);
    if (!mo || !literal("-")) return std::nullopt;
    auto const d = number(2);
    if (!d || !literal("Tt")) return std::nullopt;
    auto const h = number(2);
    if (!h || !literal(":")) return std::nullopt;
    auto const mi = number(2);
    if (!mi || !literal(":")) return std::nullopt;
    auto const sec = number(2);
    if (!sec) return std::nullopt;
    // The fraction, in clock ticks; digits finer than a tick are cut.
    clock::rep frac = 0;
    if (literal(".")) {
        std::size_t const first = i;
        clock::rep scale = period::den;
        for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
            if (scale < 10) continue;
            scale /= 10;
            frac += (s[i] - '0') * scale;
        }
        if (i == first) return std::nullopt;
    }
    int offset_minutes = 0;
    if (!literal("Zz")) {
        if (i == s.size() || (s[i] != '+' && s[i] != '-')) return std::nullopt;
        int const sign = s[i++] == '-' ? -1 : 1;
        auto const oh = number(2);
        if (!oh || !literal(":")) return std::nullopt;
        auto const om = number(2);
        if (!om || *oh > 23 || *om > 59) return std::nullopt;
        offset_minutes = sign * (*oh * 60 + *om);
    }
    if (i != s.size()) return std::nullopt;
    std::chrono::year_month_day const date{std::chrono::year(*y), std::chrono::month(static_cast<unsigned>(*mo)),
                                           std::chrono::day(static_cast<unsigned>(*d))};
    if (!date.ok() || *h > 23 || *mi > 59 || *sec > 60) return std::nullopt;
    std::int64_t const utc = std::int64_t{std::chrono::sys_days(date).time_since_epoch().count()} * 86400 + *h * 3600 +
                             *mi * 60 + *sec - std::int64_t{offset_minutes} * 60;
    // A leap second ends a UTC day (RFC 3339 section 5.7: 23:59:60Z, 15:59:60-08:00).
    if (*sec == 60 && ((utc - 60) % 86400 + 86400) % 86400 != 86340) return std::nullopt;
    clock::rep ticks = 0;
    if (__builtin_mul_overflow(utc, clock::rep{period::den}, &ticks) || __builtin_add_overflow(ticks, frac, &ticks))
        return utc < 0 ? clock::time_point::min() : clock::time_point::max();
    return clock::time_point(clock::duration(ticks));
}

}  // namespace prism_e2b::local::detail
