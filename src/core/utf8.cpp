#include "core/utf8.hpp"

namespace prism_e2b::detail {

bool is_valid_utf8(std::string_view text) noexcept
{
    auto const* p = reinterpret_cast<unsigned char const*>(text.data());
    auto const* const end = p + text.size();
    while (p < end) {
        unsigned char const c = *p;
        if (c < 0x80) {
            ++p;
            continue;
        }
        // Lead byte: sequence length and the allowed range of the second byte (RFC 3629 section 4).
        int len = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0) lo = 0xA0;  // overlong
            if (c == 0xED) hi = 0x9F;  // surrogates
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0) lo = 0x90;  // overlong
            if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
        } else {
            return false;
        }
        if (end - p < len || p[1] < lo || p[1] > hi) return false;
        for (int i = 2; i < len; ++i)
            if (p[i] < 0x80 || p[i] > 0xBF) return false;
        p += len;
    }
    return true;
}

}  // namespace prism_e2b::detail
