// Identifiers and secrets from the CSPRNG (sandbox ids, access tokens), and the
// constant-time comparison credentials are checked with.
#ifndef PRISM_E2B_EMULATOR_RANDOM_IDS_HPP
#define PRISM_E2B_EMULATOR_RANDOM_IDS_HPP

#include <cstddef>
#include <string>
#include <string_view>

namespace prism_e2b::local::detail {

/// Random lower-case alphanumeric identifier / hex token from the CSPRNG.
std::string random_id(std::size_t length);
std::string random_hex(std::size_t bytes);
/// Constant-time string comparison for credentials.
bool secure_equals(std::string_view a, std::string_view b) noexcept;

}  // namespace prism_e2b::local::detail

#endif
