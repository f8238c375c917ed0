// Minimal multipart/form-data parser (sans-io) for envd's POST /files.
#ifndef PRISM_E2B_EMULATOR_MULTIPART_HPP
#define PRISM_E2B_EMULATOR_MULTIPART_HPP

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::local::detail {

struct multipart_part {
    std::string name;                     ///< form field name
    std::optional<std::string> filename;  ///< %22 / %0D / %0A decoded as browsers and undici encode them
    std::string_view content;             ///< points into the body
};

/// The boundary parameter of a multipart/form-data Content-Type, if any.
std::optional<std::string> multipart_boundary(std::string_view content_type);

/// Splits `body` into parts; nullopt when it is not well-formed.
std::optional<std::vector<multipart_part>> parse_multipart(std::string_view body, std::string_view boundary);

}  // namespace prism_e2b::local::detail

#endif
