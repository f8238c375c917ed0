// Base64 codecs (RFC 4648): the standard alphabet (protobuf `bytes` in
// ProtoJSON, section 4) and base64url without padding (process refs, section 5).
// Decoders are strict: they never throw and reject anything non-canonical.
#ifndef PRISM_E2B_PROTOCOL_BASE64_HPP
#define PRISM_E2B_PROTOCOL_BASE64_HPP

#include <optional>
#include <string>
#include <string_view>

namespace prism_e2b::detail {

/// Standard alphabet with '=' padding to a multiple of 4 characters.
std::string base64_encode(std::string_view bytes);

/// Standard alphabet. Requires canonical padding (length a multiple of 4, '='
/// only at the end, at most two); rejects whitespace, other characters and
/// non-zero trailing bits. std::nullopt when the input is not valid.
std::optional<std::string> base64_decode(std::string_view text);

/// URL-safe alphabet ('-', '_'), no padding.
std::string base64url_encode(std::string_view bytes);

/// URL-safe alphabet without padding: rejects '=', a length of 1 mod 4,
/// characters outside the alphabet and non-zero trailing bits.
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace prism_e2b::detail

#endif
