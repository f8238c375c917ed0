// prism-e2b-local's per-sandbox disk quota (sandbox_disk.hpp), with real processes:
// writing past the template's diskSizeMB is ENOSPC inside that sandbox (its root
// too), the host gives it no more blocks than the quota and another sandbox still
// writes; df inside reports the info's diskSizeMB; the files survive a filesystem
// pause; kill, and a stop right after one, leave no image, loop device or mount behind.
#include "emulator/sandbox_disk.hpp"
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "sandbox_calls.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace prism_e2b::test;
namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t quota_mb = 48;

bool can_loop_mount()
{
    auto const why = prism_e2b::local::detail::sandbox_disk_unavailable();
    if (why.empty()) return true;
    BOOST_TEST_MESSAGE("skipped: no disk quota on this machine (" + why + ")");
    return false;
}

/// A state dir of the test's own, so it can look at the sandboxes' files from the host.
struct quota_state_dir {
    fs::path path = fs::temp_directory_path() / ("prism-e2b-disk-" + random_token(6));
    quota_state_dir() { fs::create_directories(path); }
    ~quota_state_dir()
    {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    fs::path sandbox_dir(sandbox_ref const& sb) const { return path / "sandboxes" / sb.id; }
};

std::unique_ptr<local_server_fixture> quota_server(quota_state_dir const& dir, std::string const& engine = "namespaces")
{
    return std::make_unique<local_server_fixture>([&](prism_e2b::local::server_options& o) {
        o.engine = engine;
        o.state_dir = dir.path.string();
        o.sandbox_disk_mb = quota_mb;
    });
}

/// Bytes the host really gives the file (its allocated blocks, not its sparse size).
std::uintmax_t allocated(fs::path const& file)
{
    struct stat st {};
    return ::stat(file.c_str(), &st) == 0 ? static_cast<std::uintmax_t>(st.st_blocks) * 512u : 0;
}

bool mounted_under(fs::path const& dir)
{
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.find(" " + dir.string() + "/") != std::string::npos) return true;
    return false;
}

// Fills /workspace until the disk is full; prints dd's exit status and error.
std::string const fill =
    "dd if=/dev/zero of=/workspace/big bs=1M count=200 2>&1 | grep -o 'No space left on device'"
    "; echo rc=${PIPESTATUS[0]}";

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_disk_quota)

BOOST_AUTO_TEST_CASE(writing_past_the_quota_fails_in_that_sandbox_only)
{
    if (!can_loop_mount()) return;
    quota_state_dir dir;
    auto f = quota_server(dir);
    auto a = create_sandbox(*f);
    auto b = create_sandbox(*f);
    auto const image = dir.sandbox_dir(a) / "disk.ext4";
    BOOST_REQUIRE(fs::exists(image));
    BOOST_TEST(fs::file_size(image) == std::uintmax_t(quota_mb) << 20);

    auto const full = run_command(*f, a, fill);
    BOOST_TEST(full.stdout_text == "No space left on device\nrc=1\n");
    // Every writable directory shares the quota (its writable system too), and root in the
    // sandbox gets no reserve.
    for (char const* d : {"/tmp", "/home/user", "/root", "/usr/local"}) {
        auto const more = run_command(*f, a, std::string("head -c 1048576 /dev/zero > ") + d + "/more", as_root());
        BOOST_TEST(exit_code(more) != 0, d);
        BOOST_TEST(more.stderr_text.find("No space left on device") != std::string::npos, d);
    }
    // The host gave the image no more than its size (plus ext4's own blocks, all inside it).
    BOOST_TEST(allocated(image) <= std::uintmax_t(quota_mb) << 20);
    BOOST_TEST(allocated(image) > std::uintmax_t(quota_mb - 16) << 20);  // the write did reach it
    // Another sandbox writes as before, and the full one again once it frees space.
    BOOST_TEST(run_command(*f, b, "head -c 4194304 /dev/zero > /workspace/f && wc -c < /workspace/f").stdout_text ==
               "4194304\n");
    BOOST_TEST(
        run_command(*f, a, "rm /workspace/big && echo ok > /workspace/small && cat /workspace/small").stdout_text ==
        "ok\n");
}

BOOST_AUTO_TEST_CASE(df_inside_reports_the_info_disk_size)
{
    if (!can_loop_mount()) return;
    quota_state_dir dir;
    auto f = quota_server(dir);
    auto a = create_sandbox(*f);
    BOOST_TEST(sandbox_info(*f, a)["diskSizeMB"].to_number<std::int64_t>() == quota_mb);
    auto const df = run_command(*f, a, "df -B1M --output=size /workspace | tail -1");
    auto const size = std::stol(df.stdout_text);
    // ext4 keeps a few MiB for its journal and tables.
    BOOST_TEST(size <= static_cast<long>(quota_mb));
    BOOST_TEST(size >= static_cast<long>(quota_mb) * 8 / 10);

    // A template's diskSizeMB is the quota of its sandboxes.
    {
        std::ofstream(dir.path / "templates" / "small.json") << R"({"diskSizeMB":24})";
    }
    auto s = create_sandbox(*f, R"({"templateID":"small","timeout":300})");
    BOOST_TEST(sandbox_info(*f, s)["diskSizeMB"].to_number<std::int64_t>() == 24);
    auto const small = std::stol(run_command(*f, s, "df -B1M --output=size /tmp | tail -1").stdout_text);
    BOOST_TEST(small <= 24);
    BOOST_TEST(small >= 24 * 7 / 10);
}

BOOST_AUTO_TEST_CASE(files_survive_a_filesystem_pause_and_resume)
{
    if (!can_loop_mount()) return;
    quota_state_dir dir;
    auto f = quota_server(dir);
    auto a = create_sandbox(*f);
    BOOST_REQUIRE(exit_code(run_command(*f, a, "echo kept > /workspace/k && echo root > /root/r", as_root())) == 0);
    BOOST_REQUIRE(api_post(*f, "/sandboxes/" + a.id + "/pause", R"({"memory":false})") == 204);
    BOOST_REQUIRE(api_post(*f, "/sandboxes/" + a.id + "/resume", R"({"timeout":300})") == 201);
    auto const after =
        run_command(*f, a, "cat /workspace/k /root/r; df -B1M --output=size /workspace | tail -1", as_root());
    BOOST_TEST(after.stdout_text.substr(0, 10) == "kept\nroot\n");
    BOOST_TEST(std::stol(after.stdout_text.substr(10)) <= static_cast<long>(quota_mb));
    // Still the quota: the rebooted sandbox cannot write past it either.
    BOOST_TEST(run_command(*f, a, fill).stdout_text == "No space left on device\nrc=1\n");
}

BOOST_AUTO_TEST_CASE(kill_leaves_no_image_loop_device_or_mount)
{
    if (!can_loop_mount()) return;
    quota_state_dir dir;
    auto f = quota_server(dir);
    auto a = create_sandbox(*f);
    auto const sdir = dir.sandbox_dir(a);
    auto const image = sdir / "disk.ext4";
    BOOST_REQUIRE(run_command(*f, a, "echo x > /workspace/x").end);
    BOOST_REQUIRE(prism_e2b::local::detail::loop_devices_of(image).size() == 1u);
    BOOST_REQUIRE(mounted_under(sdir));
    raw_http c(f->port());
    BOOST_REQUIRE(c.request("DELETE", "/sandboxes/" + a.id, {}, api_headers(*f)).status == 204);
    BOOST_TEST(eventually([&] {
        return !fs::exists(sdir) && !mounted_under(sdir) && prism_e2b::local::detail::loop_devices_of(image).empty();
    }));
}

BOOST_AUTO_TEST_CASE(a_stop_right_after_a_kill_leaves_no_mount)
{
    if (!can_loop_mount()) return;
    quota_state_dir dir;
    auto f = quota_server(dir);
    auto a = create_sandbox(*f);
    auto b = create_sandbox(*f);
    auto const image = dir.sandbox_dir(a) / "disk.ext4";
    {
        raw_http c(f->port());
        BOOST_REQUIRE(c.request("DELETE", "/sandboxes/" + a.id, {}, api_headers(*f)).status == 204);
    }
    f.reset();  // before the kill's removal in the background has run
    BOOST_TEST(!mounted_under(dir.path));
    BOOST_TEST(!fs::exists(dir.sandbox_dir(a)));
    BOOST_TEST(!fs::exists(dir.sandbox_dir(b)));
    BOOST_TEST(eventually([&] {
        return prism_e2b::local::detail::loop_devices_of(image).empty() &&
               prism_e2b::local::detail::loop_devices_of(dir.sandbox_dir(b) / "disk.ext4").empty();
    }));
}

BOOST_AUTO_TEST_CASE(the_other_engines_get_the_quota_too)
{
    if (!can_loop_mount()) return;
    quota_state_dir dir;
    auto f = quota_server(dir, "mount-namespace");
    auto a = create_sandbox(*f);
    BOOST_TEST(sandbox_info(*f, a)["diskSizeMB"].to_number<std::int64_t>() == quota_mb);
    BOOST_TEST(run_command(*f, a, fill).stdout_text == "No space left on device\nrc=1\n");
}

BOOST_AUTO_TEST_SUITE_END()
