// prism-e2b-local's sans-io pieces: path normalisation, multipart parsing,
// Go-style exit statuses and file modes, Basic-auth user selection, RFC 3339 input,
// a streaming call's timing headers.
#include "emulator/engines/engine_factory.hpp"
#include "emulator/engines/namespaces/namespaces_engine.hpp"
#include "emulator/multipart.hpp"
#include "emulator/process_runner.hpp"
#include "emulator/sandbox_fs.hpp"
#include "emulator/server_state.hpp"
#include "emulator/stream_deadlines.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <ratio>
#include <sys/stat.h>
#include <sys/wait.h>
#include <type_traits>

using namespace prism_e2b::local::detail;

BOOST_AUTO_TEST_SUITE(test_emulator_sansio)

BOOST_AUTO_TEST_CASE(a_rootless_namespaces_engine_attests_no_privilege_isolation)
{
    auto const root = namespaces_capabilities(false, false);
    auto const rootless = namespaces_capabilities(true, false);
    BOOST_TEST((root.filesystem_isolated && root.process_isolated && root.privilege_isolated && root.network_isolated));
    // The same namespaces, but the sandbox's processes are the server's own host user.
    BOOST_TEST((rootless.filesystem_isolated && rootless.process_isolated && rootless.network_isolated));
    BOOST_TEST(!rootless.privilege_isolated);
    BOOST_TEST(!namespaces_capabilities(true, true).network_isolated);
    auto const none = start_isolation_engine({"none", true, {}, {}});
    BOOST_TEST_REQUIRE(none.has_value());
    auto const c = (*none)->capabilities(false);
    BOOST_TEST((!c.filesystem_isolated && !c.process_isolated && !c.privilege_isolated && !c.network_isolated));
    BOOST_TEST((*none)->name() == "none");
}

BOOST_AUTO_TEST_CASE(the_engine_factory_refuses_unknown_names_and_never_downgrades)
{
    auto const unknown = start_isolation_engine({"firecracker", true, {}, {}});
    BOOST_TEST_REQUIRE(!unknown.has_value());
    BOOST_TEST((unknown.error() == prism_e2b::errc::invalid_argument));
    BOOST_TEST(unknown.error().message().find("namespaces, gvisor, mount-namespace, none") != std::string::npos);
    // An unknown name is refused even when isolation is switched off.
    BOOST_TEST(!start_isolation_engine({"firecracker", false, {}, {}}).has_value());
    // Switched off, whatever is named: none.
    auto const off = start_isolation_engine({"", false, {}, {}});
    BOOST_TEST_REQUIRE(off.has_value());
    BOOST_TEST((*off)->name() == "none");
}

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

BOOST_AUTO_TEST_CASE(a_streaming_call_reads_its_deadline_and_keepalive_once)
{
    auto const start = std::chrono::steady_clock::time_point(std::chrono::hours(1));
    auto timing_of = [&](std::string timeout, std::string keepalive) {
        http_request req;
        if (!timeout.empty()) req.headers.emplace_back("connect-timeout-ms", std::move(timeout));
        if (!keepalive.empty()) req.headers.emplace_back("keepalive-ping-interval", std::move(keepalive));
        return read_stream_timing(req, start);
    };
    auto const both = timing_of("1500", "30");
    BOOST_TEST((both.deadline == start + std::chrono::milliseconds(1500)));  // from the call's start
    BOOST_TEST((both.keepalive == std::chrono::milliseconds(30000)));        // seconds
    auto const none = timing_of("", "");
    BOOST_TEST((!none.deadline && !none.keepalive));
    // What envd ignores: not a positive decimal, or over 12 digits.
    for (std::string bad : {"0", "-5", "1.5", "10s", " 10", "1234567890123"}) {
        auto const t = timing_of(bad, bad);
        BOOST_TEST((!t.deadline && !t.keepalive), "'" << bad << "' was read");
    }
    BOOST_TEST((timing_of("123456789012", "").deadline == start + std::chrono::milliseconds(123456789012)));
    // The next wake-up: the deadline or the keepalive, whichever comes first, else an hour on.
    auto const now = start + std::chrono::seconds(1);
    BOOST_TEST((stream_wake_time(now, start + std::chrono::seconds(2), start + std::chrono::seconds(5)) ==
                start + std::chrono::seconds(2)));
    BOOST_TEST(
        (stream_wake_time(now, std::nullopt, start + std::chrono::seconds(5)) == start + std::chrono::seconds(5)));
    BOOST_TEST((stream_wake_time(now, std::nullopt, std::nullopt) == now + std::chrono::hours(1)));
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

namespace {

using sys_tp = std::chrono::system_clock::time_point;

sys_tp at(std::int64_t unix_seconds, std::int64_t nanoseconds = 0)
{
    return sys_tp(std::chrono::duration_cast<sys_tp::duration>(std::chrono::seconds(unix_seconds) +
                                                               std::chrono::nanoseconds(nanoseconds)));
}

bool parses_to(char const* text, sys_tp expected)
{
    auto const r = parse_rfc3339(text);
    return r && *r == expected;
}

// system_clock counts nanoseconds (libstdc++): 2262-04-11T23:47:16.854775807Z is its last moment.
constexpr bool nanosecond_clock = std::is_same_v<std::chrono::system_clock::period, std::nano>;

}  // namespace

BOOST_AUTO_TEST_CASE(rfc3339_reads_utc_fractions_offsets_and_leap_seconds)
{
    BOOST_TEST(parses_to("2026-01-02T03:04:05Z", at(1767323045)));
    BOOST_TEST(parses_to("2026-01-02t03:04:05z", at(1767323045)));
    BOOST_TEST(parses_to("2026-01-02T03:04:05.678Z", at(1767323045, 678000000)));
    BOOST_TEST(parses_to("2026-01-02T03:04:05.000000001Z", at(1767323045, 1)));
    BOOST_TEST(parses_to("2026-01-02T03:04:05.1234567891Z", at(1767323045, 123456789)));  // finer than a tick: cut
    // Numeric offsets: the same instant.
    BOOST_TEST(parses_to("2026-01-02T05:04:05+02:00", at(1767323045)));
    BOOST_TEST(parses_to("2026-01-01T21:34:05-05:30", at(1767323045)));
    BOOST_TEST(parses_to("2026-01-02T03:04:05-00:00", at(1767323045)));
    BOOST_TEST(parses_to("2026-01-02T03:04:05+00:00", at(1767323045)));
    // Leap seconds end a UTC day only, and read as the second after 23:59:59 (RFC 3339 section 5.7).
    BOOST_TEST(parses_to("1990-12-31T23:59:60Z", at(662687999 + 1)));
    BOOST_TEST(parses_to("1990-12-31T15:59:60-08:00", at(662687999 + 1)));
    BOOST_TEST(parses_to("2016-12-31T23:59:60.5Z", at(1483228799 + 1, 500000000)));
    BOOST_TEST(!parse_rfc3339("1990-12-31T22:59:60Z"));
    BOOST_TEST(!parse_rfc3339("1990-12-31T23:58:60Z"));
    BOOST_TEST(!parse_rfc3339("1990-12-31T23:59:60+01:00"));
    // Leap days.
    BOOST_TEST(parses_to("2024-02-29T00:00:00Z", at(1709164800)));
    BOOST_TEST(parses_to("2000-02-29T00:00:00Z", at(951782400)));
    BOOST_TEST(!parse_rfc3339("2026-02-29T00:00:00Z"));
    BOOST_TEST(!parse_rfc3339("1900-02-29T00:00:00Z"));
}

BOOST_AUTO_TEST_CASE(rfc3339_refuses_malformed_input)
{
    for (char const* bad : {
             "",
             "yesterday",
             "2026-01-02",                 // a date alone
             "2026-01-02T03:04:05",        // no offset
             "2026-01-02T03:04Z",          // no seconds
             "2026-01-02 03:04:05Z",       // a space for the T
             "2026-01-02T03:04:05Z ",      // trailing text
             "2026-01-02T03:04:05Zjunk",   // trailing text
             " 2026-01-02T03:04:05Z",      // leading space
             "+2026-01-02T03:04:05Z",      // signed year
             "-001-01-02T03:04:05Z",       // negative year
             "12026-01-02T03:04:05Z",      // five-digit year
             "2026-1-02T03:04:05Z",        // one-digit month
             "2026-01-02T3:04:05Z",        // one-digit hour
             "2026-00-02T03:04:05Z",       // month 0
             "2026-13-02T03:04:05Z",       // month 13
             "2026-01-00T03:04:05Z",       // day 0
             "2026-04-31T03:04:05Z",       // a day April does not have
             "2026-01-02T24:00:00Z",       // hour 24
             "2026-01-02T03:60:05Z",       // minute 60
             "2026-01-02T03:04:61Z",       // second 61
             "2026-01-02T03:04:05.Z",      // an empty fraction
             "2026-01-02T03:04:05,5Z",     // a comma fraction
             "2026-01-02T03:04:05+0200",   // offset without colon
             "2026-01-02T03:04:05+02",     // offset without minutes
             "2026-01-02T03:04:05+24:00",  // offset hour 24
             "2026-01-02T03:04:05+02:60",  // offset minute 60
             "2026-01-02T03:04:+5Z",       // a signed second (the sscanf before read it)
             "2026-01-02T03:04:05.5e1Z",   // an exponent (likewise)
         })
        BOOST_TEST(!parse_rfc3339(bad), bad);
    BOOST_TEST(!parse_rfc3339(std::string_view("2026-01-02T03:04:05Z\0", 21)));
}

BOOST_AUTO_TEST_CASE(rfc3339_past_the_clock_saturates)
{
    auto const max = sys_tp::max();
    auto const min = sys_tp::min();
    // Year 2262: inside the range up to its last nanosecond.
    BOOST_TEST(parses_to("2262-01-01T00:00:00Z", at(9214646400)));
    BOOST_TEST(parses_to("2262-04-11T23:47:16Z", at(9223372036)));
    BOOST_TEST(parses_to("2262-04-11T23:47:16.854775807Z", at(9223372036, 854775807)));
    BOOST_TEST(parses_to("1677-09-21T00:12:43.145224192Z", at(-9223372036, -854775808)));
    if constexpr (nanosecond_clock) {
        // Its last nanosecond, one past it, 2263, 9999: the clock's last moment, never a wrapped one.
        for (char const* late : {"2262-04-11T23:47:16.854775807Z", "2262-04-11T23:47:16.854775808Z",
                                 "2262-04-11T23:47:17Z", "2262-12-31T23:59:59Z", "2263-01-01T00:00:00Z",
                                 "9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:60Z", "2262-04-12T01:47:17+02:00"})
            BOOST_TEST((parse_rfc3339(late) == max), late);
        // Before the range (Go's zero time is 0001-01-01T00:00:00Z): its first moment.
        for (char const* early : {"1677-09-21T00:12:43.145224192Z", "1677-09-21T00:12:43.145224191Z",
                                  "0001-01-01T00:00:00Z", "0000-01-01T00:00:00+23:59"})
            BOOST_TEST((parse_rfc3339(early) == min), early);
    } else {
        BOOST_TEST(parses_to("2263-01-01T00:00:00Z", at(9246182400)));
        BOOST_TEST(parses_to("9999-12-31T23:59:59Z", at(253402300799)));
    }
    // Saturated or not, the order is kept: what startedAfter compares.
    BOOST_TEST((parse_rfc3339("2262-01-01T00:00:00Z").value() < parse_rfc3339("2263-01-01T00:00:00Z").value()));
    BOOST_TEST((parse_rfc3339("2263-01-01T00:00:00Z").value() <= parse_rfc3339("9999-12-31T23:59:59Z").value()));
    BOOST_TEST((parse_rfc3339("0001-01-01T00:00:00Z").value() < std::chrono::system_clock::now()));
    BOOST_TEST((std::chrono::system_clock::now() < parse_rfc3339("9999-12-31T23:59:59Z").value()));
}

BOOST_AUTO_TEST_SUITE_END()
