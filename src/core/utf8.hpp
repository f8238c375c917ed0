// Strict UTF-8 validation (RFC 3629): text that ends up in a JSON string sent
// to the vendor must be UTF-8, or the body is not JSON.
#ifndef PRISM_E2B_CORE_UTF8_HPP
#define PRISM_E2B_CORE_UTF8_HPP

#include <string_view>

namespace prism_e2b::detail {

/// True for well-formed UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view text) noexcept;

}  // namespace prism_e2b::detail

#endif
