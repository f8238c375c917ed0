// prism-e2b-local templates, snapshots and the control plane's fidelity items,
// against the real server: unknown templates answer 404; a template's files,
// limits, env vars and start command reach the sandbox; a snapshot copies a
// running or paused sandbox's files, seeds independent sandboxes, lists with
// filters and paging, deletes, survives a restart and never copies what a
// symlink points at; X-Total-Running; metrics; updateNetwork is unimplemented.
#include "emulator/gzip_body.hpp"
#include "emulator/sandbox_fs.hpp"
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "temp_dir.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <unistd.h>

using namespace prism_e2b::test;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

struct templates_state_dir : temp_dir {
    templates_state_dir() : temp_dir("prism-e2b-templates-") {}
};

http_reply api(local_server_fixture& f, std::string const& method, std::string const& target, std::string body = {})
{
    raw_http c(f.port());
    return c.request(method, target, std::move(body), api_headers(f));
}

int write_file(local_server_fixture& f, sandbox_ref const& sb, std::string const& path, std::string content)
{
    raw_http c(f.port());
    auto h = envd_headers(sb);
    h.emplace_back("Content-Type", "application/octet-stream");
    return c.request("POST", "/files?path=" + path, std::move(content), h).status;
}

http_reply read_file(local_server_fixture& f, sandbox_ref const& sb, std::string const& path)
{
    raw_http c(f.port());
    return c.request("GET", "/files?path=" + path, {}, envd_headers(sb));
}

std::string snapshot_of(local_server_fixture& f, sandbox_ref const& sb, std::string body = "{}")
{
    auto r = api(f, "POST", "/sandboxes/" + sb.id + "/snapshots", std::move(body));
    BOOST_REQUIRE_EQUAL(r.status, 201);
    auto o = r.json().as_object();
    BOOST_REQUIRE(!o["names"].as_array().empty());
    return std::string(o["snapshotID"].as_string());
}

sandbox_ref create_from(local_server_fixture& f, std::string const& template_id)
{
    json::object o;
    o["templateID"] = template_id;
    o["timeout"] = 300;
    return create_sandbox(f, json::serialize(o));
}

std::vector<std::string> listed_ids(http_reply const& r)
{
    std::vector<std::string> out;
    auto const v = r.json();
    for (auto const& s : v.as_array()) out.emplace_back(s.as_object().at("snapshotID").as_string());
    return out;
}

void write_text(fs::path const& p, std::string const& text)
{
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

/// The SDK's signing (e2b's signature.ts), written out here independently of the server.
std::string sdk_signature(std::string const& raw)
{
    unsigned char digest[SHA256_DIGEST_LENGTH];
    ::SHA256(reinterpret_cast<unsigned char const*>(raw.data()), raw.size(), digest);
    unsigned char b64[64] = {};
    int const n = ::EVP_EncodeBlock(b64, digest, sizeof digest);
    std::string out(reinterpret_cast<char*>(b64), static_cast<std::size_t>(n));
    while (!out.empty() && out.back() == '=') out.pop_back();
    return "v1_" + out;
}

std::string url_encode(std::string const& s)
{
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
            out.push_back(static_cast<char>(c));
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        }
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_templates)

BOOST_AUTO_TEST_CASE(an_unknown_template_answers_404_and_base_exists)
{
    local_server_fixture f;
    auto r = api(f, "POST", "/sandboxes", R"({"templateID":"no-such-template","timeout":60})");
    BOOST_TEST(r.status == 404);
    BOOST_TEST(r.body.find("no-such-template") != std::string::npos);
    BOOST_TEST(api(f, "POST", "/sandboxes", R"({"templateID":"../base","timeout":60})").status == 404);
    auto sb = create_sandbox(f);  // "base"
    BOOST_TEST(!sb.id.empty());
    BOOST_TEST(create_from(f, "base:default").id != sb.id);
}

BOOST_AUTO_TEST_CASE(a_template_seeds_files_limits_env_and_start_command)
{
    templates_state_dir state;
    auto const rootfs = state.path / "rootfs-py";
    write_text(rootfs / "home/user/hello.txt", "from the template");
    write_text(rootfs / "etc/ignored.txt", "system directories stay the host's");
    fs::create_directories(state.path / "templates");
    write_text(state.path / "templates/py.json",
               R"({"rootfs":")" + rootfs.string() +
                   R"(","cpuCount":1,"memoryMB":256,"diskSizeMB":4096,"envVars":{"TPL_VAR":"tpl","BOTH":"tpl"},)"
                   R"("startCmd":"echo started > /home/user/start.txt"})");
    local_server_fixture f([&](prism_e2b::local::server_options& o) { o.state_dir = state.path.string(); });
    auto sb = create_sandbox(f, R"({"templateID":"py","timeout":300,"envVars":{"BOTH":"create"}})");

    auto hello = read_file(f, sb, "/home/user/hello.txt");
    BOOST_TEST(hello.status == 200);
    BOOST_TEST(hello.body == "from the template");
    BOOST_TEST(read_file(f, sb, "/etc/ignored.txt").status == 404);
    auto env = run_command(f, sb, "echo $TPL_VAR $BOTH; stat -c %U /home/user/hello.txt");
    BOOST_TEST(env.stdout_text == "tpl create\nuser\n");
    BOOST_TEST(eventually([&] { return read_file(f, sb, "/home/user/start.txt").body == "started\n"; }));

    auto info = api(f, "GET", "/sandboxes/" + sb.id).json().as_object();
    BOOST_TEST(std::string(info["templateID"].as_string()) == "py");
    BOOST_TEST(info["diskSizeMB"].to_number<std::int64_t>() == 4096);
    if (f.server().isolation() == "namespaces") {  // the limits are the sandbox's cgroups
        BOOST_TEST(info["cpuCount"].to_number<std::int64_t>() == 1);
        BOOST_TEST(info["memoryMB"].to_number<std::int64_t>() == 256);
    }
    // The template's default user is who commands run as without an Authorization header.
    write_text(state.path / "templates/as-root.json", R"({"user":"root"})");
    auto rooty = create_sandbox(f, R"({"templateID":"as-root","timeout":60})");
    BOOST_TEST(run_command(f, rooty, "id -un").stdout_text == "root\n");
    BOOST_TEST(run_command(f, rooty, "id -un", {{"Authorization", "Basic dXNlcjo="}}).stdout_text == "user\n");
    BOOST_TEST(run_command(f, sb, "id -un").stdout_text == "user\n");
    // A template file that is wrong says what is wrong.
    write_text(state.path / "templates/broken.json", R"({"memoryMB":"lots"})");
    auto broken = api(f, "POST", "/sandboxes", R"({"templateID":"broken","timeout":60})");
    BOOST_TEST(broken.status == 400);
    BOOST_TEST(broken.body.find("memoryMB") != std::string::npos);
    // Templates are files: the API deletes only snapshots.
    BOOST_TEST(api(f, "DELETE", "/templates/py").status == 400);
    BOOST_TEST(api(f, "DELETE", "/templates/nothing-here").status == 404);
}

BOOST_AUTO_TEST_CASE(a_tarball_template_seeds_the_sandbox)
{
    templates_state_dir state;
    auto const src = state.path / "tarball-src";
    write_text(src / "workspace/proj/main.py", "print('hi')\n");
    write_text(src / "root/secret-of-root.txt", "root only");
    auto const tarball = state.path / "proj.tar.gz";
    std::string const cmd = "tar -czf '" + tarball.string() + "' -C '" + src.string() + "' workspace root";
    BOOST_REQUIRE_EQUAL(std::system(cmd.c_str()), 0);
    fs::create_directories(state.path / "templates");
    write_text(state.path / "templates/proj.json", R"({"rootfs":")" + tarball.string() + R"("})");
    local_server_fixture f([&](prism_e2b::local::server_options& o) { o.state_dir = state.path.string(); });
    auto sb = create_sandbox(f, R"({"templateID":"proj:default","timeout":60})");
    BOOST_TEST(read_file(f, sb, "/workspace/proj/main.py").body == "print('hi')\n");
    if (f.server().isolation() == "namespaces")  // /root is the sandbox root's: the default user cannot read it
        BOOST_TEST(run_command(f, sb, "cat /root/secret-of-root.txt 2>/dev/null || echo refused").stdout_text ==
                   "refused\n");
    BOOST_TEST(run_command(f, sb, "stat -c %U /workspace/proj/main.py").stdout_text == "user\n");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(test_emulator_snapshots)

BOOST_AUTO_TEST_CASE(a_snapshot_seeds_independent_sandboxes_and_deletes)
{
    local_server_fixture f;
    auto src = create_sandbox(f);
    BOOST_REQUIRE_EQUAL(write_file(f, src, "/home/user/app/data.txt", "important data"), 200);
    auto bg = run_command(f, src, "nohup sleep 600 >/dev/null 2>&1 & echo ok");
    BOOST_TEST(bg.stdout_text == "ok\n");

    auto const snap = snapshot_of(f, src);
    // The source runs on, its processes included.
    auto info = api(f, "GET", "/sandboxes/" + src.id).json().as_object();
    BOOST_TEST(std::string(info["state"].as_string()) == "running");
    BOOST_TEST(run_command(f, src, "pgrep -x sleep >/dev/null && echo alive").stdout_text == "alive\n");

    auto a = create_from(f, snap);
    auto b = create_from(f, snap);
    BOOST_TEST(read_file(f, a, "/home/user/app/data.txt").body == "important data");
    BOOST_TEST(run_command(f, a, "stat -c %U /home/user/app/data.txt").stdout_text == "user\n");
    BOOST_REQUIRE_EQUAL(write_file(f, a, "/home/user/app/data.txt", "changed in a"), 200);
    BOOST_TEST(read_file(f, b, "/home/user/app/data.txt").body == "important data");
    BOOST_TEST(read_file(f, src, "/home/user/app/data.txt").body == "important data");
    auto a_info = api(f, "GET", "/sandboxes/" + a.id).json().as_object();
    BOOST_TEST(std::string(a_info["templateID"].as_string()) == snap);

    BOOST_TEST(api(f, "DELETE", "/templates/" + snap).status == 204);
    BOOST_TEST(api(f, "DELETE", "/templates/" + snap).status == 404);
    BOOST_TEST(api(f, "POST", "/sandboxes", R"({"templateID":")" + snap + R"(","timeout":60})").status == 404);
    BOOST_TEST(api(f, "POST", "/sandboxes/nosuchsandbox/snapshots", "{}").status == 404);
}

BOOST_AUTO_TEST_CASE(list_filters_by_sandbox_and_name_and_pages)
{
    local_server_fixture f;
    auto one = create_sandbox(f);
    auto two = create_sandbox(f);
    auto const s1 = snapshot_of(f, one);
    auto const s2 = snapshot_of(f, two, R"({"name":"my-snap"})");
    auto const s3 = snapshot_of(f, two);
    BOOST_TEST(s2 == "my-snap:default");

    auto all = listed_ids(api(f, "GET", "/snapshots"));
    BOOST_TEST(all == (std::vector<std::string>{s3, s2, s1}));  // newest first
    auto of_two = listed_ids(api(f, "GET", "/snapshots?sandboxID=" + two.id));
    BOOST_TEST(of_two == (std::vector<std::string>{s3, s2}));
    BOOST_TEST(listed_ids(api(f, "GET", "/snapshots?name=my-snap")) == std::vector<std::string>{s2});
    BOOST_TEST(listed_ids(api(f, "GET", "/snapshots?name=team%2Fmy-snap%3Adefault")) == std::vector<std::string>{s2});
    BOOST_TEST(listed_ids(api(f, "GET", "/snapshots?name=my-snap-does-not-exist")).empty());
    BOOST_TEST(api(f, "GET", "/snapshots?name=x&sandboxID=y").status == 400);
    BOOST_TEST(api(f, "GET", "/snapshots?limit=0").status == 400);

    auto first = api(f, "GET", "/snapshots?limit=2");
    BOOST_TEST(listed_ids(first) == (std::vector<std::string>{s3, s2}));
    BOOST_REQUIRE(first.headers.count("x-next-token"));
    auto second = api(f, "GET", "/snapshots?limit=2&nextToken=" + first.headers["x-next-token"]);
    BOOST_TEST(listed_ids(second) == std::vector<std::string>{s1});
    BOOST_TEST(!second.headers.count("x-next-token"));

    // The same name again: a new build of that snapshot, one entry.
    BOOST_REQUIRE_EQUAL(write_file(f, one, "/home/user/v.txt", "v2"), 200);
    BOOST_TEST(snapshot_of(f, one, R"({"name":"my-snap"})") == s2);
    BOOST_TEST(listed_ids(api(f, "GET", "/snapshots?name=my-snap")) == std::vector<std::string>{s2});
    BOOST_TEST(read_file(f, create_from(f, s2), "/home/user/v.txt").body == "v2");
    BOOST_TEST(api(f, "POST", "/sandboxes/" + one.id + "/snapshots", R"({"name":"../x"})").status == 400);
}

BOOST_AUTO_TEST_CASE(a_paused_sandbox_snapshots_and_stays_paused)
{
    local_server_fixture f;
    auto src = create_sandbox(f);
    BOOST_REQUIRE_EQUAL(write_file(f, src, "/workspace/w.txt", "paused files"), 200);
    BOOST_REQUIRE_EQUAL(api(f, "POST", "/sandboxes/" + src.id + "/pause", R"({"memory":false})").status, 204);
    auto const snap = snapshot_of(f, src);
    auto info = api(f, "GET", "/sandboxes/" + src.id).json().as_object();
    BOOST_TEST(std::string(info["state"].as_string()) == "paused");
    BOOST_TEST(read_file(f, create_from(f, snap), "/workspace/w.txt").body == "paused files");
}

BOOST_AUTO_TEST_CASE(a_symlink_is_copied_as_a_link_never_as_what_it_points_at)
{
    local_server_fixture f;
    auto src = create_sandbox(f);
    // Absolute targets resolve inside the sandbox's root, and the copy never follows them.
    auto made = run_command(f, src, "ln -s /etc/hostname /home/user/host-link && echo made");
    BOOST_REQUIRE(made.stdout_text == "made\n");
    auto const snap = snapshot_of(f, src);
    auto copy = create_from(f, snap);
    BOOST_TEST(run_command(f, copy, "readlink /home/user/host-link").stdout_text == "/etc/hostname\n");
    // /files resolves it inside the new sandbox's own root, as a command there does.
    auto const seen = run_command(f, copy, "cat /home/user/host-link 2>/dev/null || echo none");
    auto const via_files = read_file(f, copy, "/home/user/host-link");
    BOOST_TEST((via_files.status == 200 ? via_files.body : std::string("none\n")) == seen.stdout_text);
}

BOOST_AUTO_TEST_CASE(snapshots_survive_a_restart)
{
    templates_state_dir state;
    std::string snap;
    {
        local_server_fixture f([&](prism_e2b::local::server_options& o) { o.state_dir = state.path.string(); });
        auto src = create_sandbox(f);
        BOOST_REQUIRE_EQUAL(write_file(f, src, "/home/user/keep.txt", "kept"), 200);
        snap = snapshot_of(f, src, R"({"name":"kept-snap"})");
    }  // a clean stop removes the sandboxes, not the snapshots
    local_server_fixture f([&](prism_e2b::local::server_options& o) { o.state_dir = state.path.string(); });
    BOOST_TEST(listed_ids(api(f, "GET", "/snapshots")) == std::vector<std::string>{snap});
    BOOST_TEST(read_file(f, create_from(f, snap), "/home/user/keep.txt").body == "kept");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(test_emulator_control_fidelity)

BOOST_AUTO_TEST_CASE(list_reports_the_total_running)
{
    local_server_fixture f;
    auto a = create_sandbox(f);
    auto b = create_sandbox(f);
    create_sandbox(f);
    BOOST_REQUIRE_EQUAL(api(f, "POST", "/sandboxes/" + b.id + "/pause", R"({"memory":true})").status, 204);
    auto r = api(f, "GET", "/v2/sandboxes?limit=1");
    BOOST_TEST(r.headers["x-total-running"] == "2");
    BOOST_TEST(api(f, "GET", "/sandboxes").headers["x-total-running"] == "2");
    (void)a;
}

BOOST_AUTO_TEST_CASE(metrics_sample_the_sandbox)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    BOOST_REQUIRE_EQUAL(write_file(f, sb, "/home/user/blob", std::string(256 * 1024, 'x')), 200);
    auto busy = run_command(
        f, sb, "nohup sleep 600 >/dev/null 2>&1 & i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo done");
    BOOST_TEST(busy.stdout_text == "done\n");
    auto r = api(f, "GET", "/sandboxes/" + sb.id + "/metrics");
    BOOST_REQUIRE_EQUAL(r.status, 200);
    auto const body = r.json();
    auto const& series = body.as_array();
    BOOST_REQUIRE_EQUAL(series.size(), 1u);
    auto const& m = series[0].as_object();
    BOOST_TEST(m.at("cpuCount").to_number<std::int64_t>() >= 1);
    BOOST_TEST(m.at("memUsed").to_number<std::int64_t>() > 0);
    BOOST_TEST(m.at("memTotal").to_number<std::int64_t>() >= m.at("memUsed").to_number<std::int64_t>());
    BOOST_TEST(m.at("diskUsed").to_number<std::int64_t>() >= 256 * 1024);
    BOOST_TEST(m.at("diskTotal").to_number<std::int64_t>() > m.at("diskUsed").to_number<std::int64_t>());
    BOOST_TEST(m.at("cpuUsedPct").to_number<double>() >= 0.0);
    BOOST_TEST(m.contains("timestamp"));
    // An interval that excludes now has no sample; a bad one is refused.
    BOOST_TEST(api(f, "GET", "/sandboxes/" + sb.id + "/metrics?end=1").json().as_array().empty());
    BOOST_TEST(api(f, "GET", "/sandboxes/" + sb.id + "/metrics?start=-1").status == 400);
    BOOST_TEST(api(f, "GET", "/sandboxes/nosuch/metrics").status == 404);

    auto batch = api(f, "GET", "/sandboxes/metrics?sandbox_ids=" + sb.id + ",nosuch");
    BOOST_REQUIRE_EQUAL(batch.status, 200);
    auto const batch_body = batch.json();
    auto const& all = batch_body.as_object().at("sandboxes").as_object();
    BOOST_TEST(all.size() == 1u);
    BOOST_TEST(all.contains(sb.id));
    BOOST_TEST(api(f, "GET", "/sandboxes/metrics").status == 400);
}

BOOST_AUTO_TEST_CASE(signed_file_urls_need_the_right_signature_and_time)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    auto const now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto const path = std::string("/home/user/signed file.txt");
    auto signed_target = [&](std::string const& op, std::string const& user, std::optional<long long> exp,
                             std::string const& token) {
        std::string raw = path + ":" + op + ":" + user + ":" + token;
        if (exp) raw += ":" + std::to_string(*exp);
        std::string t = "/files?path=" + url_encode(path) + "&signature=" + url_encode(sdk_signature(raw));
        if (!user.empty()) t += "&username=" + user;
        if (exp) t += "&signature_expiration=" + std::to_string(*exp);
        return t;
    };
    header_pairs only_id = {{"E2b-Sandbox-Id", sb.id}, {"Content-Type", "application/octet-stream"}};
    auto call = [&](std::string const& method, std::string const& target, std::string body = {}) {
        raw_http c(f.port());
        return c.request(method, target, std::move(body), only_id);
    };
    // Upload without expiry, download with one: no X-Access-Token needed.
    BOOST_TEST(call("POST", signed_target("write", "", std::nullopt, sb.token), "signed body").status == 200);
    auto got = call("GET", signed_target("read", "user", now + 60, sb.token));
    BOOST_TEST(got.status == 200);
    BOOST_TEST(got.body == "signed body");
    // The SDK's URL against one sandboxUrl names no sandbox: the signature says whose it is.
    {
        raw_http c(f.port());
        auto plain = c.request("GET", signed_target("read", "", std::nullopt, sb.token), {});
        BOOST_TEST(plain.status == 200);
        BOOST_TEST(plain.body == "signed body");
        BOOST_TEST(c.request("GET", signed_target("read", "", now - 5, sb.token), {}).status == 401);
    }
    // Expired, the wrong operation, another user, another sandbox's token, an altered expiry: refused.
    BOOST_TEST(call("GET", signed_target("read", "", now - 5, sb.token)).status == 401);
    BOOST_TEST(call("GET", signed_target("write", "", std::nullopt, sb.token)).status == 401);
    BOOST_TEST(call("GET", signed_target("read", "root", std::nullopt, sb.token) + "&username=user").status == 401);
    auto other = create_sandbox(f);
    BOOST_TEST(call("GET", signed_target("read", "", std::nullopt, other.token)).status == 401);
    auto t = signed_target("read", "", now + 60, sb.token);
    t.replace(t.rfind('=') + 1, std::string::npos, std::to_string(now + 6000));
    BOOST_TEST(call("GET", t).status == 401);
    // The signature is for one path only.
    auto moved = signed_target("read", "", std::nullopt, sb.token);
    moved.replace(moved.find("signed"), 6, "other-");
    BOOST_TEST(call("GET", moved).status == 401);
}

BOOST_AUTO_TEST_CASE(symlink_targets_are_absolute_and_resolved_and_remove_of_nothing_succeeds)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    BOOST_REQUIRE(run_command(f, sb,
                              "echo t > /home/user/test_file.txt && mkdir -p /home/user/d && "
                              "ln -s ../test_file.txt /home/user/d/up && ln -s d/up /home/user/chain && "
                              "ln -s /etc/hostname /home/user/abs && ln -s missing /home/user/dangling")
                      .end);
    auto target = [&](std::string const& path) {
        raw_http c(f.port());
        auto h = envd_headers(sb);
        auto r = c.request("POST", "/filesystem.Filesystem/Stat", R"({"path":")" + path + R"("})", h);
        auto const v = r.json();
        return std::string(v.as_object().at("entry").as_object().at("symlinkTarget").as_string());
    };
    BOOST_TEST(target("/home/user/d/up") == "/home/user/test_file.txt");
    BOOST_TEST(target("/home/user/chain") == "/home/user/test_file.txt");  // every link followed
    BOOST_TEST(target("/home/user/abs") == "/etc/hostname");               // inside the sandbox's root
    BOOST_TEST(target("/home/user/dangling") == "/home/user/missing");
    {
        raw_http c(f.port());
        auto r = c.request("POST", "/filesystem.Filesystem/ListDir", R"({"path":"/home/user/d"})", envd_headers(sb));
        auto const v = r.json();
        auto const& entries = v.as_object().at("entries").as_array();
        BOOST_REQUIRE_EQUAL(entries.size(), 1u);
        BOOST_TEST(std::string(entries[0].as_object().at("symlinkTarget").as_string()) == "/home/user/test_file.txt");
    }
    raw_http c(f.port());
    BOOST_TEST(c.request("POST", "/filesystem.Filesystem/Remove", R"({"path":"/home/user/nothing"})", envd_headers(sb))
                   .status == 200);
    BOOST_TEST(c.request("POST", "/filesystem.Filesystem/Remove", R"({"path":"/home/user/no/dir/x"})", envd_headers(sb))
                   .status == 200);
}

BOOST_AUTO_TEST_CASE(files_take_and_give_gzip)
{
    local_server_fixture f([](prism_e2b::local::server_options& o) { o.max_file_bytes = 1 << 20; });
    auto sb = create_sandbox(f);
    std::string const text(200 * 1024, 'z');
    auto h = envd_headers(sb);
    h.emplace_back("Content-Type", "application/octet-stream");
    auto gz = h;
    gz.emplace_back("Content-Encoding", "gzip");
    {
        raw_http c(f.port());
        BOOST_TEST(
            c.request("POST", "/files?path=/home/user/gz.txt", prism_e2b::local::detail::gzip(text), gz).status == 200);
    }
    BOOST_TEST(read_file(f, sb, "/home/user/gz.txt").body == text);  // stored inflated
    {
        raw_http c(f.port());
        auto plain = envd_headers(sb);
        plain.emplace_back("Accept-Encoding", "gzip, deflate");
        auto r = c.request("GET", "/files?path=/home/user/gz.txt", {}, plain);
        BOOST_TEST(r.headers["content-encoding"] == "gzip");
        BOOST_TEST(r.body.size() < text.size() / 10);
        prism_e2b::local::detail::gunzip_error why{};
        BOOST_TEST(prism_e2b::local::detail::gunzip(r.body, 1 << 20, why).value_or("") == text);
        plain.back().second = "gzip;q=0, identity";
        BOOST_TEST(!c.request("GET", "/files?path=/home/user/gz.txt", {}, plain).headers.count("content-encoding"));
    }
    raw_http c(f.port());
    // A bomb: small on the wire, past the upload limit inflated. Corrupt, and unknown encodings.
    BOOST_TEST(
        c.request("POST", "/files?path=/home/user/bomb", prism_e2b::local::detail::gzip(std::string(4 << 20, 0)), gz)
            .status == 413);
    BOOST_TEST(c.request("POST", "/files?path=/home/user/bad", "not gzip at all", gz).status == 400);
    auto br = h;
    br.emplace_back("Content-Encoding", "br");
    BOOST_TEST(c.request("POST", "/files?path=/home/user/br", "x", br).status == 415);
    BOOST_TEST(read_file(f, sb, "/home/user/bomb").status == 404);
}

BOOST_AUTO_TEST_CASE(update_network_is_unimplemented)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    auto r = api(f, "PUT", "/sandboxes/" + sb.id + "/network", R"({"allowOut":[]})");
    BOOST_TEST(r.status == 501);
    BOOST_TEST(r.body.find("unimplemented") != std::string::npos);
    BOOST_TEST(api(f, "PUT", "/sandboxes/nosuch/network", "{}").status == 404);
}

BOOST_AUTO_TEST_SUITE_END()
