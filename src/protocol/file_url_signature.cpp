// The SDK's /files URL signature (file_url_signature.hpp).
#include "protocol/file_url_signature.hpp"

#include "protocol/base64.hpp"

#include <openssl/sha.h>

namespace prism_e2b::detail {

std::string file_url_signature(std::string_view path, std::string_view operation, std::string_view user,
                               std::string_view access_token, std::optional<std::int64_t> expires_unix)
{
    std::string raw;
    raw.append(path).append(":").append(operation).append(":").append(user).append(":").append(access_token);
    if (expires_unix) raw.append(":").append(std::to_string(*expires_unix));
    unsigned char digest[SHA256_DIGEST_LENGTH];
    ::SHA256(reinterpret_cast<unsigned char const*>(raw.data()), raw.size(), digest);
    std::string b64 = base64_encode(std::string_view(reinterpret_cast<char const*>(digest), sizeof digest));
    while (!b64.empty() && b64.back() == '=') b64.pop_back();
    return "v1_" + b64;
}

}  // namespace prism_e2b::detail
