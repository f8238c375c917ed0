// Signed /files URLs, as the official SDK makes them (sandbox.uploadUrl /
// downloadUrl): `signature=v1_...` (protocol/file_url_signature.hpp) and
// `signature_expiration=<unix seconds>` when the URL expires. Such a URL needs
// no X-Access-Token; a wrong, altered or expired one is refused.
#ifndef PRISM_E2B_EMULATOR_SIGNED_URL_HPP
#define PRISM_E2B_EMULATOR_SIGNED_URL_HPP

#include "emulator/http_message.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace prism_e2b::local::detail {

/// Does `req` (a /files request) carry a signature? It then needs no X-Access-Token.
bool has_file_signature(http_request const& req);

/// nullopt when the request's signature is valid for `access_token` at `now`, else why not.
std::optional<std::string> check_file_signature(http_request const& req, std::string_view access_token,
                                                std::chrono::system_clock::time_point now);

}  // namespace prism_e2b::local::detail

#endif
