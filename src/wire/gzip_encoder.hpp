// gzip (zlib, gzip wrapper) of a request body, for envd uploads that accept
// Content-Encoding: gzip (client_options::gzip_uploads).
#ifndef PRISM_E2B_WIRE_GZIP_ENCODER_HPP
#define PRISM_E2B_WIRE_GZIP_ENCODER_HPP

#include <prism_e2b/error.hpp>

#include <string>
#include <string_view>

namespace prism_e2b::wire {

/// The gzip member of `data` at the default level. Errors: out of memory.
result<std::string> gzip_encode(std::string_view data);

}  // namespace prism_e2b::wire

#endif
