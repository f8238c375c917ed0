// User metadata of files (envd 0.6.2): an upload's `X-Metadata-<key>: <value>`
// headers are kept as extended attributes `user.e2b.<key>` on the file and come
// back in EntryInfo.metadata (Stat, ListDir, watch entries, the upload's answer).
// Keys are HTTP header names, so they arrive lower-cased. A write with metadata
// replaces the file's; a write without keeps what it had.
#ifndef PRISM_E2B_EMULATOR_FILE_METADATA_HPP
#define PRISM_E2B_EMULATOR_FILE_METADATA_HPP

#include "emulator/http_message.hpp"

#include <map>
#include <string>
#include <string_view>
#include <variant>

namespace prism_e2b::local::detail {

using file_metadata = std::map<std::string, std::string>;

/// The metadata an upload's headers carry, or why they are refused (the SDK's rules:
/// keys are header tokens, values printable US-ASCII, at most 4 KiB in all).
std::variant<file_metadata, std::string> metadata_from_headers(header_list const& headers);

/// Makes `md` the metadata of the regular file open (for writing) as `fd`. Returns 0 or an errno
/// (ENOTSUP: the file system keeps no user xattrs; ENOSPC/E2BIG: too much for it).
int write_file_metadata(int fd, file_metadata const& md);

/// The metadata of the file or directory open as `fd` (an O_PATH descriptor will do);
/// empty when it has none or its file system keeps no user xattrs.
file_metadata read_file_metadata(int fd);

}  // namespace prism_e2b::local::detail

#endif
