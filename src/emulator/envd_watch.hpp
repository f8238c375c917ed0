// filesystem.Filesystem's directory watchers: WatchDir (a server stream) and the
// polling watchers the Python SDK uses (CreateWatcher, GetWatcherEvents,
// RemoveWatcher), both on inotify, with the entry's info in each event when asked
// (include_entry, envd 0.6.3).
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
