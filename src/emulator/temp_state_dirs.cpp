#include "emulator/temp_state_dirs.hpp"

#include "emulator/sandbox_fs.hpp"

#include <fcntl.h>
#include <string_view>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;

namespace {

/// True when `dir` was last changed more than `min_age` ago (by its own mtime
/// and its lock file's).
bool old_enough(fs::path const& dir, std::chrono::seconds min_age)
{
    auto const cutoff = ::time(nullptr) - min_age.count();
    for (fs::path const& p : {dir, dir / "server.lock"}) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) == 0 && st.st_mtime > cutoff) return false;
    }
    return true;
}

/// Its entries are at most `server.lock` (a regular file) and `sandboxes` (an
/// empty directory).
bool holds_nothing_else(fs::path const& dir)
{
    std::error_code ec;
    for (auto const& e : fs::directory_iterator(dir, ec)) {
        auto const name = e.path().filename().string();
        auto const st = fs::symlink_status(e.path(), ec);
        if (name == "server.lock" && fs::is_regular_file(st)) continue;
        if (name == "sandboxes" && fs::is_directory(st) && fs::is_empty(e.path(), ec) && !ec) continue;
        return false;
    }
    return !ec;
}

bool sweep_one(fs::path const& dir, std::chrono::seconds min_age)
{
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) return false;
    if (!old_enough(dir, min_age) || !holds_nothing_else(dir)) return false;
    auto const lock_path = dir / "server.lock";
    unique_fd lock(::open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    if (lock && ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) return false;  // its server is alive
    // Under the lock, so no server can take this directory while it goes.
    if (!holds_nothing_else(dir)) return false;
    ::rmdir((dir / "sandboxes").c_str());
    if (lock) ::unlink(lock_path.c_str());
    return ::rmdir(dir.c_str()) == 0;
}

}  // namespace

std::size_t sweep_stale_temp_state_dirs(fs::path const& parent, std::chrono::seconds min_age)
{
    std::size_t removed = 0;
    std::error_code ec;
    for (auto const& e : fs::directory_iterator(parent, ec)) {
        if (std::string_view(e.path().filename().native()).rfind(temp_state_dir_prefix, 0) != 0) continue;
        if (sweep_one(e.path(), min_age)) ++removed;
    }
    return removed;
}

}  // namespace prism_e2b::local::detail
