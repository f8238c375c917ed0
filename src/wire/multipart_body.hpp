// multipart/form-data framing of envd's POST /files (the SDK's FormData): a
// random boundary, one "file" part per file named by its path. Shared by
// write_file (envd < 0.5.7), the batch write and the streamed write.
#ifndef PRISM_E2B_WIRE_MULTIPART_BODY_HPP
#define PRISM_E2B_WIRE_MULTIPART_BODY_HPP

#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::wire {

/// A random boundary absent from every one of `contents` (those known up front).
std::string multipart_boundary(std::vector<std::string_view> const& contents);
/// "multipart/form-data; boundary=<b>"
std::string multipart_content_type(std::string const& boundary);
/// What precedes a file part's bytes (the first part's too); CR, LF and '"' of
/// the filename are replaced, as they cannot appear in the header.
std::string multipart_part_head(std::string const& boundary, std::string_view filename);
/// What follows a part's bytes when another part follows.
std::string multipart_part_gap();
/// What follows the last part's bytes.
std::string multipart_tail(std::string const& boundary);

}  // namespace prism_e2b::wire

#endif
