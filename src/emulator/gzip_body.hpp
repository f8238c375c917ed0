// gzip for /files bodies (zlib): uploads with `Content-Encoding: gzip` are
// inflated (never past the upload limit, so a small bomb cannot grow into the
// server's memory) and downloads are deflated when the client's Accept-Encoding
// takes gzip.
#ifndef PRISM_E2B_EMULATOR_GZIP_BODY_HPP
#define PRISM_E2B_EMULATOR_GZIP_BODY_HPP

#include "emulator/http_message.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace prism_e2b::local::detail {

/// Why an inflate failed.
enum class gunzip_error { corrupt, too_large };

/// The gzip stream `in` inflated (concatenated members included), at most `max_bytes` of it.
std::optional<std::string> gunzip(std::string_view in, std::size_t max_bytes, gunzip_error& why);

/// `in` as one gzip member.
std::string gzip(std::string_view in);

/// Does an Accept-Encoding header value take gzip (a q of 0 refuses it)?
bool accepts_gzip(std::string_view accept_encoding);

/// For an upload: inflates a gzip body in place (dropping Content-Encoding); nullopt when the
/// request may go on, else the answer: 415 for an encoding other than gzip or identity, 400 for a
/// corrupt stream, 413 when the inflated body would pass `max_bytes`.
std::optional<http_response> inflate_upload(http_request& req, std::size_t max_bytes);

/// For a whole-body download: gzips `res.body` (Content-Encoding: gzip) when `req` accepts it.
void gzip_response_for(http_request const& req, http_response& res);

}  // namespace prism_e2b::local::detail

#endif
