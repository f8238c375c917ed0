// No file-type traps: /files never blocks on (or reads) a FIFO, socket or device,
// the filesystem calls answer on them, and Remove / kill / stop delete trees
// deeper than the descriptor limit (lowered for the test).
#include "emulator/sandbox_fs.hpp"
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "raw_tcp.hpp"
#include "sandbox_calls.hpp"
#include "temp_dir.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace prism_e2b::test;
namespace fs = std::filesystem;

namespace {

/// A state dir the test owns, so it can look at (and unstick) the sandboxes' files on the host.
struct file_types_state_dir : temp_dir {
    file_types_state_dir() : temp_dir("prism-e2b-filetypes-") {}
    fs::path root_of(sandbox_ref const& sb) const { return path / "sandboxes" / sb.id / "root"; }
};

/// On the way out, opens each FIFO read-write on the host, which releases a server
/// thread stuck in open() (without the fix under test the fixture could not stop).
struct fifo_unsticker {
    std::vector<fs::path> fifos;
    ~fifo_unsticker()
    {
        for (auto const& p : fifos) {
            int const fd = ::open(p.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
            if (fd >= 0) ::close(fd);
        }
    }
};

header_pairs with(header_pairs h, std::string name, std::string value)
{
    h.emplace_back(std::move(name), std::move(value));
    return h;
}

/// One request on its own connection (Connection: close), answered within `within`
/// or not at all: a server stuck on the file must fail the test, not hang it.
/// Returns the whole response ("" when none came).
std::string request_within(std::uint16_t port, std::string const& method, std::string const& target,
                           std::string const& body, header_pairs const& headers,
                           std::chrono::milliseconds within = std::chrono::seconds(10))
{
    raw_tcp c(port);
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    for (auto const& [n, v] : headers) req += n + ": " + v + "\r\n";
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    c.send(req);
    return c.read_all(within);
}

/// "HTTP/1.1 400 ..." and a body naming `what`.
bool refused_as(std::string const& response, std::string const& what)
{
    return response.rfind("HTTP/1.1 400 ", 0) == 0 && response.find(what) != std::string::npos;
}

/// Lowers this process's soft descriptor limit (the in-process server's too) for a
/// test, so a tree a few times deeper than the limit is quick to build and remove.
struct fd_limit {
    rlimit saved{};
    explicit fd_limit(rlim_t soft)
    {
        ::getrlimit(RLIMIT_NOFILE, &saved);
        rlimit lowered = saved;
        lowered.rlim_cur = std::min(soft, saved.rlim_cur);
        ::setrlimit(RLIMIT_NOFILE, &lowered);
    }
    ~fd_limit() { ::setrlimit(RLIMIT_NOFILE, &saved); }
    static rlim_t current()
    {
        rlimit r{};
        ::getrlimit(RLIMIT_NOFILE, &r);
        return r.rlim_cur;
    }
};

constexpr rlim_t test_fd_limit = 2048;
// Three times the limit: one descriptor per level (the old recursive remove,
// fs::remove_all) fails with EMFILE. Removal itself never needs more than two, so
// 60,000 levels work as well (checked by hand); this keeps the test short.
constexpr int deep_levels = 6000;

std::string make_deep_tree(std::string const& under)
{
    return "cd " + under + " && perl -e 'for (1.." + std::to_string(deep_levels) +
           ") { mkdir \"d\" or die \"mkdir: $!\"; chdir \"d\" or die \"chdir: $!\" } open my $f, \">\", \"leaf\" "
           "or die; print \"deep ok\\n\"'";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_file_types)

BOOST_AUTO_TEST_CASE(files_refuses_fifos_sockets_and_devices_and_keeps_serving)
{
    file_types_state_dir dir;
    local_server_fixture f([&](prism_e2b::local::server_options& o) { o.state_dir = dir.path.string(); });
    auto sb = create_sandbox(f);
    auto other = create_sandbox(f);
    fifo_unsticker unstick{{dir.root_of(sb) / "workspace/f", dir.root_of(sb) / "workspace/g"}};
    auto made = run_command(f, sb,
                            "mkfifo /workspace/f /workspace/g && "
                            "perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die; "
                            "bind($s, pack_sockaddr_un(\"/workspace/s\")) or die' && echo made",
                            as_root());
    BOOST_TEST_REQUIRE(made.stdout_text == "made\n", made.stderr_text);
    // A device node: root in a sandbox may not make one (user namespace), so the
    // host puts /dev/zero's twin into the sandbox's tree.
    auto const zero = dir.root_of(sb) / "workspace/zero";
    BOOST_TEST_REQUIRE(::mknod(zero.c_str(), S_IFCHR | 0666, makedev(1, 5)) == 0, std::strerror(errno));

    auto const h = envd_headers(sb);
    auto octet = with(h, "Content-Type", "application/octet-stream");
    std::string const part =
        "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"g\"\r\n\r\ndata\r\n--b--\r\n";
    auto const multipart = with(h, "Content-Type", "multipart/form-data; boundary=b");
    auto r = request_within(f.port(), "GET", "/files?path=/workspace/f", {}, h);
    BOOST_TEST(refused_as(r, "named pipe"), r);
    r = request_within(f.port(), "POST", "/files?path=/workspace/g", "data", octet);
    BOOST_TEST(refused_as(r, "named pipe"), r);
    r = request_within(f.port(), "POST", "/files?path=/workspace/g", part, multipart);
    BOOST_TEST(refused_as(r, "named pipe"), r);
    r = request_within(f.port(), "GET", "/files?path=/workspace/zero", {}, h);  // /dev/zero: read forever
    BOOST_TEST(refused_as(r, "character device"), r.substr(0, 200));
    r = request_within(f.port(), "POST", "/files?path=/workspace/zero", "data", octet);
    BOOST_TEST(refused_as(r, "character device"), r);
    r = request_within(f.port(), "GET", "/files?path=/workspace/s", {}, h);
    BOOST_TEST(refused_as(r, "socket"), r);

    // The server, this sandbox and the others all still answer (bounded waits: a stuck server fails here).
    BOOST_TEST_REQUIRE(request_within(f.port(), "GET", "/health", {}, {}).rfind("HTTP/1.1 200 ", 0) == 0);
    BOOST_TEST_REQUIRE(request_within(f.port(), "GET", "/health", {}, envd_headers(other)).rfind("HTTP/1.1 204 ", 0) ==
                       0);
    auto const plain = request_within(f.port(), "POST", "/files?path=/workspace/plain", "hello", octet);
    BOOST_TEST_REQUIRE(plain.rfind("HTTP/1.1 200 ", 0) == 0, plain);
    raw_http c(f.port());
    auto rr = c.request("GET", "/files?path=/workspace/plain", {}, h);
    BOOST_TEST(rr.status == 200);
    BOOST_TEST(rr.body == "hello");
    BOOST_TEST(run_command(f, other, "echo alive").stdout_text == "alive\n");
    BOOST_TEST(run_command(f, sb, "test -p /workspace/f && echo still-a-fifo").stdout_text == "still-a-fifo\n");
}

BOOST_AUTO_TEST_CASE(filesystem_calls_answer_on_a_fifo)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    BOOST_TEST_REQUIRE(run_command(f, sb, "mkfifo /workspace/p && echo ok").stdout_text == "ok\n");
    raw_http c(f.port(), std::chrono::seconds(15));
    auto const h = rpc_headers(sb);
    auto r = c.request("POST", "/filesystem.Filesystem/Stat", R"({"path":"/workspace/p"})", h);
    BOOST_TEST(r.status == 200);
    BOOST_TEST(r.json().as_object()["entry"].as_object()["permissions"].as_string().starts_with("p"));
    r = c.request("POST", "/filesystem.Filesystem/ListDir", R"({"path":"/workspace/p"})", h);
    BOOST_TEST(r.status == 400);
    r = c.request("POST", "/filesystem.Filesystem/ListDir", R"({"path":"/workspace"})", h);
    BOOST_TEST(r.status == 200);
    r = c.request("POST", "/filesystem.Filesystem/MakeDir", R"({"path":"/workspace/p"})", h);
    BOOST_TEST(r.status == 400);
    r = c.request("POST", "/filesystem.Filesystem/Move", R"({"source":"/workspace/p","destination":"/workspace/q"})",
                  h);
    BOOST_TEST(r.status == 200);
    r = c.request("POST", "/filesystem.Filesystem/Remove", R"({"path":"/workspace/q"})", h);
    BOOST_TEST(r.status == 200);
    BOOST_TEST(c.request("POST", "/filesystem.Filesystem/Stat", R"({"path":"/workspace/q"})", h).status == 404);
}

BOOST_AUTO_TEST_CASE(remove_deletes_a_tree_deeper_than_the_descriptor_limit)
{
    fd_limit limit(test_fd_limit);
    BOOST_TEST_REQUIRE(static_cast<rlim_t>(deep_levels) > 2 * fd_limit::current());
    file_types_state_dir dir;
    local_server_fixture f([&](prism_e2b::local::server_options& o) { o.state_dir = dir.path.string(); });
    auto sb = create_sandbox(f);
    auto made = run_command(f, sb, make_deep_tree("/workspace") + " && mkdir -p /workspace/keep");
    BOOST_TEST_REQUIRE(made.stdout_text == "deep ok\n", made.stderr_text);
    raw_http c(f.port(), std::chrono::seconds(120));
    auto r = c.request("POST", "/filesystem.Filesystem/Remove", R"({"path":"/workspace/d"})", rpc_headers(sb));
    BOOST_TEST(r.status == 200, r.body);
    BOOST_TEST(c.request("POST", "/filesystem.Filesystem/Stat", R"({"path":"/workspace/d"})", rpc_headers(sb)).status ==
               404);
    BOOST_TEST(!fs::exists(dir.root_of(sb) / "workspace/d"));
    BOOST_TEST(fs::exists(dir.root_of(sb) / "workspace/keep"));  // only what was asked
}

BOOST_AUTO_TEST_CASE(kill_and_stop_leave_no_deep_tree_on_disk)
{
    fd_limit limit(test_fd_limit);
    BOOST_TEST_REQUIRE(static_cast<rlim_t>(deep_levels) > 2 * fd_limit::current());
    file_types_state_dir dir;
    fs::path killed_dir, stopped_dir;
    {
        local_server_fixture f([&](prism_e2b::local::server_options& o) { o.state_dir = dir.path.string(); });
        auto killed = create_sandbox(f);
        auto stopped = create_sandbox(f);
        killed_dir = dir.path / "sandboxes" / killed.id;
        stopped_dir = dir.path / "sandboxes" / stopped.id;
        for (auto const* sb : {&killed, &stopped}) {
            auto made = run_command(f, *sb, make_deep_tree("/tmp"));
            BOOST_TEST_REQUIRE(made.stdout_text == "deep ok\n", made.stderr_text);
        }
        raw_http c(f.port());
        BOOST_TEST(c.request("DELETE", "/sandboxes/" + killed.id, {}, api_headers(f)).status == 204);
        BOOST_TEST(eventually([&] { return !fs::exists(killed_dir); }, std::chrono::seconds(120)));
        BOOST_TEST(fs::exists(stopped_dir));
    }  // the server stops here
    BOOST_TEST(!fs::exists(stopped_dir));
}

BOOST_AUTO_TEST_SUITE_END()
