// Streamed and batch file transfer over envd's /files (envd.yaml), as the
// official SDK's files.read(..., {format: 'stream'}), files.write(path, stream)
// and files.write([...]): the plain data the client's transfer calls take and
// give. A streamed transfer holds at most one chunk of the file at a time.
#ifndef PRISM_E2B_E2B_FILE_TRANSFER_HPP
#define PRISM_E2B_E2B_FILE_TRANSFER_HPP

#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/error.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace prism_e2b::e2b {

/// How far a transfer got.
struct transfer_progress {
    std::uint64_t bytes = 0;             ///< moved so far
    std::optional<std::uint64_t> total;  ///< the whole size, when known (Content-Length, the source's size)
};

/// Called after each chunk, on a thread of the client's io_context (not
/// necessarily the caller's strand), one call at a time per transfer; must not block.
/// The sink and the source below are called the same way.
using progress_callback = std::function<void(transfer_progress const&)>;

/// Receives a streamed read's bytes in order, one chunk at a time (the chunk is
/// only valid during the call). An error stops the transfer with that error.
using chunk_sink = std::function<result<void>(std::string_view chunk)>;

/// The bytes of a streamed write: fills `buffer` with the next bytes and answers
/// how many (0: the end). rewind() starts again from the first byte (a request
/// replayed on a fresh connection); size() is the exact byte count sent.
struct chunk_source {
    std::function<result<std::size_t>(std::span<char> buffer)> read;  ///< next bytes into `buffer`; 0: the end
    std::function<result<void>()> rewind;                             ///< back to the first byte
    std::uint64_t size = 0;                                           ///< the exact byte count read() yields
};

/// Options of a streamed transfer.
struct transfer_options {
    /// Largest piece moved at once: the bound on the file bytes the client
    /// holds. Between 1 KiB and 16 MiB.
    std::size_t chunk_size = 64u << 10;
    progress_callback on_progress;    ///< empty: none
    std::optional<std::string> user;  ///< the `username` query parameter; envd's default user when absent
};

/// What a streamed transfer moved and the most file bytes it held at once.
struct transfer_summary {
    std::uint64_t bytes = 0;  ///< bytes moved
    std::size_t peak_buffer =
        0;  ///< largest piece held at once (bounded by chunk_size on writes, by the transport's read size on reads)
};

/// A streamed write's result: the file as envd describes it afterwards (its real size).
struct streamed_write {
    entry_info entry;           ///< the written file (filesystem.Filesystem/Stat after the upload)
    transfer_summary transfer;  ///< what moved
};

/// One file of a batch write.
struct file_write {
    std::string path;  ///< absolute, or relative to the user's home
    std::string data;  ///< its whole content
};

/// The operation a signed /files URL allows.
enum class file_operation { read /*GET*/, write /*POST*/ };

/// Options of file_url(): the SDK's uploadUrl / downloadUrl.
struct file_url_options {
    file_operation operation = file_operation::read;  ///< what the URL allows
    std::optional<std::string> user;                  ///< the `username` parameter; signed as "" when absent
    std::optional<std::chrono::seconds> expires_in;   ///< signature_expiration = now + this; absent: never expires
};

}  // namespace prism_e2b::e2b

#endif
