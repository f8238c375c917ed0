// prism-e2b-local's sans-io pieces: path normalisation, multipart parsing,
// Go-style exit statuses and file modes, Basic-auth user selection.
#include "emulator/multipart.hpp"
#include "emulator/process_runner.hpp"
#include "emulator/sandbox_fs.hpp"
#include "emulator/server_state.hpp"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <sys/stat.h>
#include <sys/wait.h>

using namespace prism_e2b::local::detail;

BOOST_AUTO_TEST_SUITE(test_emulator_sansio)

BOOST_AUTO_TEST_CASE(paths_normalise_and_never_climb_above_root)
{
    BOOST_TEST(*normalize_sandbox_path("/workspace/./a//b/../c") == "/workspace/a/c");
    BOOST_TEST(*normalize_sandbox_path("x/y") == "/home/user/x/y");
    BOOST_TEST(*normalize_sandbox_path("") == "/home/user");
    BOOST_TEST(*normalize_sandbox_path("/") == "/");
    BOOST_TEST(*normalize_sandbox_path("..") == "/home");
    BOOST_TEST(*normalize_sandbox_path("../..") == "/");
    BOOST_TEST(!normalize_sandbox_path("../../.."));
    BOOST_TEST(!normalize_sandbox_path("/.."));
    BOOST_TEST(!normalize_sandbox_path("/a/../../b"));
    BOOST_TEST(!normalize_sandbox_path(std::string_view("/a\0b", 4)));
    std::string parent, name;
    BOOST_TEST(split_parent("/a/b", parent, name));
    BOOST_TEST(parent == "/a");
    BOOST_TEST(name == "b");
    BOOST_TEST(split_parent("/a", parent, name));
    BOOST_TEST(parent == "/");
    BOOST_TEST(!split_parent("/", parent, name));
}

BOOST_AUTO_TEST_CASE(multipart_bodies_parse_and_malformed_ones_are_refused)
{
    auto b = multipart_boundary("multipart/form-data; boundary=----formdata-undici-0123");
    BOOST_REQUIRE(b);
    BOOST_TEST(*b == "----formdata-undici-0123");
    BOOST_TEST(*multipart_boundary("multipart/form-data; boundary=\"q b\"") == "q b");
    BOOST_TEST(!multipart_boundary("application/json"));
    BOOST_TEST(!multipart_boundary("multipart/form-data"));

    std::string const body =
        "------formdata-undici-0123\r\n"
        "Content-Disposition: form-data; name=\"file\"; filename=\"/home/user/a %22b%22.txt\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n"
        "hello\r\nworld\r\n"
        "------formdata-undici-0123\r\n"
        "Content-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\n"
        "\r\n"
        "------formdata-undici-0123--\r\n";
    auto parts = parse_multipart(body, *b);
    BOOST_REQUIRE(parts);
    BOOST_REQUIRE_EQUAL(parts->size(), 2u);
    BOOST_TEST((*parts)[0].name == "file");
    BOOST_TEST(*(*parts)[0].filename == "/home/user/a \"b\".txt");
    BOOST_TEST((*parts)[0].content == "hello\r\nworld");
    BOOST_TEST((*parts)[1].content.empty());
    BOOST_TEST(!parse_multipart("garbage", *b));
    BOOST_TEST(!parse_multipart(body.substr(0, body.size() / 2), *b));
    BOOST_TEST(!parse_multipart("------formdata-undici-0123\r\nno header end", *b));
}

BOOST_AUTO_TEST_CASE(wait_statuses_read_like_go)
{
    BOOST_TEST(wait_status_text(0) == "exit status 0");
    BOOST_TEST(wait_status_text(3 << 8) == "exit status 3");
    BOOST_TEST(wait_status_text(SIGKILL) == "signal: killed");
    BOOST_TEST(wait_status_text(SIGTERM) == "signal: terminated");
    BOOST_TEST(wait_status_text(SIGSEGV | 0x80) == "signal: segmentation fault (core dumped)");
    BOOST_TEST(go_mode_string(S_IFREG | 0644) == "-rw-r--r--");
    BOOST_TEST(go_mode_string(S_IFDIR | 0755) == "drwxr-xr-x");
    BOOST_TEST(go_mode_string(S_IFLNK | 0777) == "Lrwxrwxrwx");
}

BOOST_AUTO_TEST_CASE(basic_auth_selects_known_users_only)
{
    BOOST_TEST(*basic_auth_user("") == "");
    BOOST_TEST(*basic_auth_user("Basic cm9vdDo=") == "root");
    BOOST_TEST(*basic_auth_user("Basic dXNlcjo=") == "user");
    BOOST_TEST(!basic_auth_user("Bearer abc"));
    BOOST_TEST(!basic_auth_user("Basic !!!"));
    BOOST_TEST(lookup_user("")->uid == 1000u);
    BOOST_TEST(lookup_user("user")->home == "/home/user");
    BOOST_TEST(lookup_user("root")->uid == 0u);
    BOOST_TEST(!lookup_user("nobody"));
    BOOST_TEST(secure_equals("abc", "abc"));
    BOOST_TEST(!secure_equals("abc", "abd"));
    BOOST_TEST(!secure_equals("abc", "abcd"));
    BOOST_TEST(random_id(20).size() == 20u);
    BOOST_TEST(random_id(20) != random_id(20));
    BOOST_TEST(random_hex(32).size() == 64u);
}

BOOST_AUTO_TEST_SUITE_END()
