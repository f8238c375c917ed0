// Signed /files URLs (signed_url.hpp).
#include "emulator/signed_url.hpp"

#include "emulator/random_ids.hpp"
#include "emulator/route_paths.hpp"
#include "protocol/file_url_signature.hpp"

namespace prism_e2b::local::detail {

bool has_file_signature(http_request const& req)
{
    for (auto const& [k, v] : parse_query(req.query))
        if (k == "signature") return true;
    return false;
}

std::optional<std::string> check_file_signature(http_request const& req, std::string_view access_token,
                                                std::chrono::system_clock::time_point now)
{
    std::string path, user, signature;
    std::optional<std::string> expiration;
    for (auto const& [k, v] : parse_query(req.query)) {
        if (k == "path")
            path = v;
        else if (k == "username")
            user = v;
        else if (k == "signature")
            signature = v;
        else if (k == "signature_expiration")
            expiration = v;
    }
    std::string_view const operation = req.method == "POST" ? "write" : req.method == "GET" ? "read" : "";
    if (operation.empty()) return "a signed URL is for GET or POST /files only";
    std::optional<std::int64_t> expires;
    if (expiration) {
        char* endp = nullptr;
        long long const n = std::strtoll(expiration->c_str(), &endp, 10);
        if (expiration->empty() || *endp != '\0') return "invalid signature_expiration";
        expires = n;
    }
    if (!secure_equals(signature, prism_e2b::detail::file_url_signature(path, operation, user, access_token, expires)))
        return "invalid signature";
    auto const now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    if (expires && *expires < now_s) return "the signed URL has expired";
    return std::nullopt;
}

}  // namespace prism_e2b::local::detail
