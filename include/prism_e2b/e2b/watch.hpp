// filesystem.Filesystem/WatchDir as the client exposes it: the request and a
// stream of filesystem events (filesystem.proto's FilesystemEvent).
#ifndef PRISM_E2B_E2B_WATCH_HPP
#define PRISM_E2B_E2B_WATCH_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <utility>

namespace prism_e2b::e2b {

/// What happened to an entry (filesystem.EventType).
enum class fs_event_type { unspecified, create, write, remove, rename, chmod };

/// One event of a watched directory (filesystem.FilesystemEvent).
struct fs_event {
    std::string name;                                 ///< the entry's path relative to the watched directory
    fs_event_type type = fs_event_type::unspecified;  ///< create, write, remove, rename or chmod
    /// The entry as it is now, when include_entry was asked and envd could stat
    /// it (never for remove or rename-away).
    std::optional<entry_info> entry;
};

/// filesystem.Filesystem/WatchDir request.
struct watch_dir_params {
    std::string path;                 ///< the directory to watch (absolute, in the sandbox)
    bool recursive = false;           ///< also watch every subdirectory, present and future
    bool include_entry = false;       ///< ask envd for each event's entry info
    std::optional<std::string> user;  ///< Authorization: Basic base64("user:")
    /// Connect-Timeout-Ms: envd ends the stream (errc::timed_out) when it passes; 0 sends none.
    std::chrono::milliseconds timeout{0};
};

/// The event stream of one WatchDir call.
///
/// async_next() completes with the next event; envd's start and keepalive
/// messages are consumed, never yielded. std::nullopt: the stream ended
/// cleanly (envd sent an end-of-stream without error). An end-of-stream error
/// is mapped to its code (not_found when the directory was removed,
/// timed_out after the deadline); a stream cut before its end-of-stream is
/// errc::unknown_outcome (events may have been missed). After an error every
/// async_next() repeats it.
///
/// Thread safety: one async_next() at a time. close() may be called from any
/// thread. Per-operation cancellation of async_next(): terminal; it closes the
/// stream (errc::cancelled, then unusable). Destroying the stream closes its
/// connection. The stream must outlive its pending async_next().
class PRISM_E2B_API watch_event_stream {
public:
    virtual ~watch_event_stream() = default;

    /// The next event: `result<std::optional<fs_event>>`.
    template <class CompletionToken = default_completion_token>
    auto async_next(CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::optional<fs_event>>(
            std::forward<CompletionToken>(token),
            [this](completion_handler<std::optional<fs_event>> h) { do_next(std::move(h)); });
    }
    /// Closes the connection now; a pending async_next() completes with errc::cancelled.
    virtual void close() noexcept = 0;

protected:
    virtual void do_next(completion_handler<std::optional<fs_event>> h) = 0;  ///< body of async_next
};

}  // namespace prism_e2b::e2b

#endif
