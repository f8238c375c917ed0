// The signature of a signed /files URL, as the official SDK computes it
// (signature.ts, used by sandbox.uploadUrl / downloadUrl):
//   "v1_" + base64(sha256("<path>:<operation>:<user>:<access token>[:<expiry>]")), no '=' padding
// operation is "write" for an upload (POST), "read" for a download (GET); user is
// the `username` query parameter ("" when absent); expiry is the
// `signature_expiration` in Unix seconds, when the URL expires. The client signs
// URLs with it (wire/signed_urls.cpp), the local server checks them
// (emulator/signed_url.cpp).
#ifndef PRISM_E2B_PROTOCOL_FILE_URL_SIGNATURE_HPP
#define PRISM_E2B_PROTOCOL_FILE_URL_SIGNATURE_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace prism_e2b::detail {

/// The SDK's signature of (path, operation, user, access token, expiry).
std::string file_url_signature(std::string_view path, std::string_view operation, std::string_view user,
                               std::string_view access_token, std::optional<std::int64_t> expires_unix);

}  // namespace prism_e2b::detail

#endif
