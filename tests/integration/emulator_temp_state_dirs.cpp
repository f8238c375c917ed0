// A server started without a state dir makes a temporary one and removes it at
// stop; the ones that servers killed before their stop left behind are swept at
// the next start, and only those: never one in use, one holding sandboxes, one
// being created, or one of another name.
#include "emulator/temp_state_dirs.hpp"
#include "local_server_fixture.hpp"
#include "temp_dir.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace prism_e2b::test;
namespace fs = std::filesystem;
namespace detail = prism_e2b::local::detail;

namespace {

/// Sets the mtime of `p` to an hour ago.
void age(fs::path const& p)
{
    timespec const t[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
    ::utimensat(AT_FDCWD, p.c_str(), t, AT_SYMLINK_NOFOLLOW);
}

/// What a killed idle server leaves: an empty sandboxes/ and server.lock; aged
/// unless `young`.
fs::path left_behind(fs::path const& parent, std::string const& name, bool young = false)
{
    auto const d = parent / name;
    fs::create_directories(d / "sandboxes");
    std::ofstream(d / "server.lock").flush();
    if (!young) {
        age(d / "server.lock");
        age(d);
    }
    return d;
}

/// Points TMPDIR (fs::temp_directory_path) at `dir` for this scope.
struct tmpdir_override {
    std::string saved;
    bool had = false;
    explicit tmpdir_override(fs::path const& dir)
    {
        if (char const* v = std::getenv("TMPDIR")) {
            had = true;
            saved = v;
        }
        ::setenv("TMPDIR", dir.c_str(), 1);
    }
    ~tmpdir_override()
    {
        if (had)
            ::setenv("TMPDIR", saved.c_str(), 1);
        else
            ::unsetenv("TMPDIR");
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_temp_state_dirs)

BOOST_AUTO_TEST_CASE(only_dead_servers_empty_temp_dirs_are_swept)
{
    temp_dir parent("prism-e2b-test-tmp-");
    auto const dead = left_behind(parent.path, "prism-e2b-local-dead01");
    auto const no_lock = left_behind(parent.path, "prism-e2b-local-nolock");
    fs::remove(no_lock / "server.lock");
    age(no_lock);
    // A live server holds the flock on its lock file for its whole life.
    auto const live = left_behind(parent.path, "prism-e2b-local-live01");
    int const held = ::open((live / "server.lock").c_str(), O_RDWR | O_CLOEXEC);
    BOOST_REQUIRE(held >= 0);
    BOOST_REQUIRE_EQUAL(::flock(held, LOCK_EX | LOCK_NB), 0);
    // A killed server that had a sandbox: its files are not ours to drop.
    auto const with_sandbox = left_behind(parent.path, "prism-e2b-local-sbx001");
    fs::create_directories(with_sandbox / "sandboxes" / "abc");
    age(with_sandbox / "sandboxes");
    age(with_sandbox);
    auto const with_file = left_behind(parent.path, "prism-e2b-local-file01");
    std::ofstream(with_file / "ledger").flush();
    age(with_file);
    auto const young = left_behind(parent.path, "prism-e2b-local-young1", true);  // between mkdtemp and its lock
    auto const other_name = left_behind(parent.path, "someone-elses-dir");
    fs::create_directory_symlink(dead, parent.path / "prism-e2b-local-link01");

    BOOST_TEST(detail::sweep_stale_temp_state_dirs(parent.path, std::chrono::minutes(1)) == 2u);
    BOOST_TEST(!fs::exists(dead));
    BOOST_TEST(!fs::exists(no_lock));
    BOOST_TEST(fs::exists(live / "server.lock"));
    BOOST_TEST(fs::exists(with_sandbox / "sandboxes" / "abc"));
    BOOST_TEST(fs::exists(with_file / "ledger"));
    BOOST_TEST(fs::exists(young / "server.lock"));
    BOOST_TEST(fs::exists(other_name / "server.lock"));
    BOOST_TEST(fs::is_symlink(parent.path / "prism-e2b-local-link01"));
    ::close(held);

    // Once its server is gone, the live one's directory goes at the next sweep.
    BOOST_TEST(detail::sweep_stale_temp_state_dirs(parent.path, std::chrono::minutes(1)) == 1u);
    BOOST_TEST(!fs::exists(live));
}

BOOST_AUTO_TEST_CASE(a_server_without_a_state_dir_sweeps_at_start_and_removes_its_own_at_stop)
{
    temp_dir parent("prism-e2b-test-tmp-");
    auto const dead = left_behind(parent.path, "prism-e2b-local-dead02");
    tmpdir_override tmp(parent.path);
    {
        local_server_fixture srv;
        BOOST_TEST(!fs::exists(dead));
        std::size_t ours = 0;
        for (auto const& e : fs::directory_iterator(parent.path))
            if (e.path().filename().string().rfind(detail::temp_state_dir_prefix, 0) == 0) ++ours;
        BOOST_TEST(ours == 1u);  // the running server's own
    }
    BOOST_TEST(fs::is_empty(parent.path));
}

BOOST_AUTO_TEST_SUITE_END()
