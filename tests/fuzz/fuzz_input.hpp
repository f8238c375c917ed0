// Helpers for the fuzz targets: the input as text, split into fields, and a
// check that aborts (so libFuzzer reports the input) when a property fails.
#ifndef PRISM_E2B_FUZZ_INPUT_HPP
#define PRISM_E2B_FUZZ_INPUT_HPP

#include <prism_e2b/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace prism_e2b::fuzz {

inline std::string_view as_text(std::uint8_t const* data, std::size_t size) noexcept
{
    return {reinterpret_cast<char const*>(data), size};
}

/// Splits at every `sep` (an empty input gives one empty field).
inline std::vector<std::string_view> split(std::string_view s, char sep)
{
    std::vector<std::string_view> out;
    for (;;) {
        auto const i = s.find(sep);
        out.push_back(s.substr(0, i));
        if (i == std::string_view::npos) return out;
        s.remove_prefix(i + 1);
    }
}

/// A property of the code under test that must hold for every input.
inline void require(bool ok, char const* what)
{
    if (ok) return;
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
}

/// A parse result: a value, or the typed error `expected` with a message.
template <class T>
void require_value_or(result<T> const& r, errc expected, char const* what)
{
    if (r) return;
    require(r.error() == expected, what);
    require(!r.error().message().empty(), "an error says what was wrong");
}

}  // namespace prism_e2b::fuzz

#endif
