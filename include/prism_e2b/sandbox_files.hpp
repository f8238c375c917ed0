// Optional: the sandbox's files (read, write, list, stat, remove, watch).
// Obtain with disposable_sandbox::files(); nullptr means "not supported".
#ifndef PRISM_E2B_SANDBOX_FILES_HPP
#define PRISM_E2B_SANDBOX_FILES_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace prism_e2b {

/// Kind of a filesystem entry.
enum class file_kind { other, file, directory, symlink };

/// One filesystem entry as the backend reports it.
struct file_entry {
    std::string name;                           ///< base name
    std::string path;                           ///< absolute path in the sandbox
    file_kind kind = file_kind::other;          ///< file, directory, symlink or other
    std::int64_t size = 0;                      ///< size in bytes
    std::uint32_t mode = 0;                     ///< Unix mode bits
    std::string modified_time;                  ///< RFC 3339, as the backend sent it
    std::optional<std::string> symlink_target;  ///< where a symlink points
};

/// One change in a watched directory.
struct file_event {
    /// What happened.
    enum class kind { other, create, write, remove, rename, chmod };
    kind what = kind::other;          ///< create, write, remove, rename (away) or chmod
    std::string name;                 ///< the entry's path relative to the watched directory
    std::optional<file_entry> entry;  ///< the entry now, when the backend sends it
};

/// The events of one watch (sandbox_files::async_watch).
///
/// async_next() completes with the next event, or std::nullopt when the
/// backend ended the watch cleanly. A watch cut before its end is
/// errc::unknown_outcome (events may have been missed); a removed directory
/// is errc::not_found. Thread safety: one async_next() at a time; close() from
/// any thread. Per-operation cancellation of async_next(): terminal, it closes
/// the watch. The watch must outlive its pending async_next().
class PRISM_E2B_API file_watch {
public:
    virtual ~file_watch() = default;

    /// The next event: `result<std::optional<file_event>>`.
    template <class CompletionToken = default_completion_token>
    auto async_next(CompletionToken&& token = {})
    {
        return detail::initiate<std::optional<file_event>>(
            std::forward<CompletionToken>(token),
            [this](completion_handler<std::optional<file_event>> h) { do_next(std::move(h)); });
    }
    /// Ends the watch now; a pending async_next() completes with errc::cancelled.
    virtual void close() noexcept = 0;

protected:
    virtual void do_next(completion_handler<std::optional<file_event>> h) = 0;  ///< body of async_next
};

/// Optional: the sandbox's files. Obtain with disposable_sandbox::files().
///
/// Paths (the workspace rules, README "Files, terminals and users"): a relative path resolves
/// under the sandbox's workdir; "" and "." are the workdir itself. A relative
/// path whose `..` leaves the workdir, and an absolute path outside the
/// workdir and the allowed roots the host configured, are refused with
/// errc::permission_denied before any vendor call; a path with NUL or another
/// control character, or longer than 4096 bytes, is errc::invalid_argument.
/// The rules are lexical: the sandbox itself is the isolation boundary.
///
/// Thread safety, completion executor, cancellation and lifetimes: as
/// disposable_sandbox (the sandbox must outlive every operation).
class PRISM_E2B_API sandbox_files {
public:
    virtual ~sandbox_files() = default;

    /// The file's bytes: `result<std::string>`. Errors: not_found, the path rules, the backend's.
    template <class CompletionToken = default_completion_token>
    auto async_read_file(std::string path, CompletionToken&& token = {})
    {
        return detail::initiate<std::string>(
            std::forward<CompletionToken>(token),
            [this](std::string p, completion_handler<std::string> h) { do_read_file(std::move(p), std::move(h)); },
            std::move(path));
    }
    /// Creates or replaces the file (parent directories are created):
    /// `result<file_entry>`, the entry written.
    template <class CompletionToken = default_completion_token>
    auto async_write_file(std::string path, std::string data, CompletionToken&& token = {})
    {
        return detail::initiate<file_entry>(
            std::forward<CompletionToken>(token),
            [this](std::string p, std::string d, completion_handler<file_entry> h) {
                do_write_file(std::move(p), std::move(d), std::move(h));
            },
            std::move(path), std::move(data));
    }
    /// The entries of a directory, `depth` levels deep (1: its children):
    /// `result<std::vector<file_entry>>`.
    template <class CompletionToken = default_completion_token>
    auto async_list_dir(std::string path, std::uint32_t depth, CompletionToken&& token = {})
    {
        return detail::initiate<std::vector<file_entry>>(
            std::forward<CompletionToken>(token),
            [this](std::string p, std::uint32_t d, completion_handler<std::vector<file_entry>> h) {
                do_list_dir(std::move(p), d, std::move(h));
            },
            std::move(path), depth);
    }
    /// One entry: `result<file_entry>`; errc::not_found when it does not exist.
    template <class CompletionToken = default_completion_token>
    auto async_stat(std::string path, CompletionToken&& token = {})
    {
        return detail::initiate<file_entry>(
            std::forward<CompletionToken>(token),
            [this](std::string p, completion_handler<file_entry> h) { do_stat(std::move(p), std::move(h)); },
            std::move(path));
    }
    /// Removes a file or a directory tree: `result<void>`. The workdir itself is refused.
    template <class CompletionToken = default_completion_token>
    auto async_remove(std::string path, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](std::string p, completion_handler<void> h) { do_remove(std::move(p), std::move(h)); },
            std::move(path));
    }
    /// Watches a directory: `result<std::unique_ptr<file_watch>>`, completing
    /// once the watch is in place (later changes are reported).
    template <class CompletionToken = default_completion_token>
    auto async_watch(std::string path, bool recursive, CompletionToken&& token = {})
    {
        return detail::initiate<std::unique_ptr<file_watch>>(
            std::forward<CompletionToken>(token),
            [this](std::string p, bool r, completion_handler<std::unique_ptr<file_watch>> h) {
                do_watch(std::move(p), r, std::move(h));
            },
            std::move(path), recursive);
    }

protected:
    virtual void do_read_file(std::string path, completion_handler<std::string> h) = 0;  ///< body of async_read_file
    virtual void do_write_file(std::string path, std::string data,
                               completion_handler<file_entry> h) = 0;  ///< body of async_write_file
    virtual void do_list_dir(std::string path, std::uint32_t depth,
                             completion_handler<std::vector<file_entry>> h) = 0;   ///< body of async_list_dir
    virtual void do_stat(std::string path, completion_handler<file_entry> h) = 0;  ///< body of async_stat
    virtual void do_remove(std::string path, completion_handler<void> h) = 0;      ///< body of async_remove
    virtual void do_watch(std::string path, bool recursive,
                          completion_handler<std::unique_ptr<file_watch>> h) = 0;  ///< body of async_watch
};

}  // namespace prism_e2b

#endif
