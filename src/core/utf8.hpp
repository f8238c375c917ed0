// Strict UTF-8 validation (RFC 3629): text that ends up in a JSON string sent
// to the vendor must be UTF-8, or the body is not JSON. And the control
// characters that labels and paths may not hold.
#ifndef PRISM_E2B_CORE_UTF8_HPP
#define PRISM_E2B_CORE_UTF8_HPP

#include <string_view>

namespace prism_e2b::detail {

/// True for well-formed UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view text) noexcept;

/// True when `text` holds a C0 control character or DEL.
inline bool has_control_char(std::string_view text) noexcept
{
    for (unsigned char c : text)
        if (c < 0x20 || c == 0x7f) return true;
    return false;
}

}  // namespace prism_e2b::detail

#endif
