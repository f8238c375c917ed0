// filesystem.Filesystem's directory watchers: WatchDir (a server stream) and the
// polling watchers the Python SDK uses (CreateWatcher, GetWatcherEvents,
// RemoveWatcher), both on inotify, with the entry's info in each event when asked
// (include_entry, envd 0.6.3). A directory on a network file system (NFS, SMB/CIFS,
// FUSE: inotify misses what other machines change there) is watched only when the
// request allows it (allow_network_mounts, envd 0.6.4), as envd does.
#ifndef PRISM_E2B_EMULATOR_ENVD_WATCH_HPP
#define PRISM_E2B_EMULATOR_ENVD_WATCH_HPP

#include <boost/json/object.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace prism_e2b::local::detail {

struct sandbox;
struct watch_set;

/// The network file system `f_type` (statfs) is, as a name ("nfs", "smb", "cifs", "fuse");
/// nullptr for a local one.
char const* network_filesystem_name(long f_type) noexcept;

/// One polling watcher: its inotify queue holds the events until the next GetWatcherEvents.
struct polling_watcher;

/// The polling watchers of one sandbox, by id. Thread safety: behind its mutex.
class watcher_registry {
public:
    watcher_registry();
    ~watcher_registry();
    /// Answers CreateWatcher, GetWatcherEvents or RemoveWatcher (`method`) for `request`:
    /// the response message, or an error {"code","message"} (`failed` set).
    boost::json::object call(sandbox const& sb, std::string_view method, boost::json::object const& request,
                             bool& failed);

private:
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<polling_watcher>> watchers_;
};

}  // namespace prism_e2b::local::detail

#endif
