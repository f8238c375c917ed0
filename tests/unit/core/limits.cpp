#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/limits.hpp>
#include <prism_e2b/process.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

using namespace prism_e2b;
using std::chrono::milliseconds;

namespace {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = 1024 * KiB;
constexpr std::uint64_t GiB = 1024 * MiB;

// One field of a limits struct with its contract minimum and cap. `set`
// writes a value (as a 64-bit count of the field's unit).
template <class Limits>
struct field {
    char const* name;
    std::int64_t min;
    std::int64_t max;
    std::function<void(Limits&, std::int64_t)> set;
    bool is_duration = false;  ///< signed milliseconds: min - 1 is representable even when min is 0
};

template <class Limits>
void check_ranges(std::vector<field<Limits>> const& fields)
{
    for (auto const& f : fields) {
        BOOST_TEST_CONTEXT("field " << f.name)
        {
            for (auto v : {f.min, f.max}) {
                Limits l;
                f.set(l, v);
                BOOST_TEST(l.validate().has_value(), "rejected in-range " << v);
            }
            for (auto v : {f.min - 1, f.max + 1}) {
                if (v < 0 && !f.is_duration) continue;  // an unsigned count cannot hold -1
                Limits l;
                f.set(l, v);
                auto r = l.validate();
                BOOST_REQUIRE(!r.has_value());
                BOOST_TEST((r.error() == errc::invalid_argument));
                // The message names the field and the allowed range.
                BOOST_TEST(r.error().message().find(f.name) != std::string::npos, r.error().message());
                BOOST_TEST(r.error().message().find(std::to_string(f.max)) != std::string::npos, r.error().message());
            }
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_limits)

BOOST_AUTO_TEST_CASE(sandbox_defaults_match_contract)
{
    sandbox_limits l;
    BOOST_TEST(l.max_commands == 100u);
    BOOST_TEST(l.max_concurrent_execs == 1u);
    BOOST_TEST(l.max_output_bytes == 64 * MiB);
    BOOST_TEST(l.max_env_names == 64u);
    BOOST_TEST(l.max_env_bytes == 64 * KiB);
    BOOST_TEST(l.wall_time.count() == 20 * 60 * 1000);
    BOOST_TEST(l.stop_grace.count() == 5000);
    BOOST_TEST(l.cleanup_deadline.count() == 30000);
    BOOST_TEST(l.validate().has_value());
}

BOOST_AUTO_TEST_CASE(sandbox_caps_match_contract)
{
    using c = sandbox_limit_caps;
    BOOST_TEST(c::max_commands == 256u);
    BOOST_TEST(c::max_concurrent_execs == 8u);
    BOOST_TEST(c::max_output_bytes == 1 * GiB);
    BOOST_TEST(c::max_env_names == 256u);
    BOOST_TEST(c::max_env_bytes == 256 * KiB);
    BOOST_TEST(c::wall_time.count() == 30 * 60 * 1000);
    BOOST_TEST(c::min_wall_time.count() == 1000);
    BOOST_TEST(c::stop_grace.count() == 30000);
    BOOST_TEST(c::cleanup_deadline.count() == 120000);
}

BOOST_AUTO_TEST_CASE(session_defaults_and_caps_match_contract)
{
    process_session_limits l;
    BOOST_TEST(l.max_sessions == 8u);
    BOOST_TEST(l.max_input_write == 64 * KiB);
    BOOST_TEST(l.max_lifetime.count() == 4ll * 3600 * 1000);
    BOOST_TEST(l.max_output_chunk == 50 * KiB);
    BOOST_TEST(l.max_total_output == 64 * MiB);
    BOOST_TEST(l.validate().has_value());
    using c = process_session_limit_caps;
    BOOST_TEST(c::max_sessions == 32u);
    BOOST_TEST(c::max_input_write == 1 * MiB);
    BOOST_TEST(c::max_lifetime.count() == 24ll * 3600 * 1000);
    BOOST_TEST(c::max_output_chunk == 1 * MiB);
    BOOST_TEST(c::max_total_output == 1 * GiB);
}

BOOST_AUTO_TEST_CASE(sandbox_every_field_at_and_beyond_its_range)
{
    using L = sandbox_limits;
    check_ranges<L>({
        {"max_commands", 1, 256, [](L& l, std::int64_t v) { l.max_commands = static_cast<std::uint32_t>(v); }},
        {"max_concurrent_execs", 1, 8,
         [](L& l, std::int64_t v) { l.max_concurrent_execs = static_cast<std::uint32_t>(v); }},
        {"max_output_bytes", 1, static_cast<std::int64_t>(GiB),
         [](L& l, std::int64_t v) { l.max_output_bytes = static_cast<std::uint64_t>(v); }},
        {"max_env_names", 0, 256, [](L& l, std::int64_t v) { l.max_env_names = static_cast<std::uint32_t>(v); }},
        {"max_env_bytes", 0, static_cast<std::int64_t>(256 * KiB),
         [](L& l, std::int64_t v) { l.max_env_bytes = static_cast<std::uint64_t>(v); }},
        {"wall_time", 1000, 30 * 60 * 1000, [](L& l, std::int64_t v) { l.wall_time = milliseconds(v); }, true},
        {"stop_grace", 0, 30000, [](L& l, std::int64_t v) { l.stop_grace = milliseconds(v); }, true},
        {"cleanup_deadline", 1, 120000, [](L& l, std::int64_t v) { l.cleanup_deadline = milliseconds(v); }, true},
    });
}

BOOST_AUTO_TEST_CASE(session_every_field_at_and_beyond_its_range)
{
    using L = process_session_limits;
    check_ranges<L>({
        {"max_sessions", 1, 32, [](L& l, std::int64_t v) { l.max_sessions = static_cast<std::uint32_t>(v); }},
        {"max_input_write", 1, static_cast<std::int64_t>(MiB),
         [](L& l, std::int64_t v) { l.max_input_write = static_cast<std::uint64_t>(v); }},
        {"max_lifetime", 1, 24ll * 3600 * 1000, [](L& l, std::int64_t v) { l.max_lifetime = milliseconds(v); }, true},
        {"max_output_chunk", 1, static_cast<std::int64_t>(MiB),
         [](L& l, std::int64_t v) { l.max_output_chunk = static_cast<std::uint64_t>(v); }},
        {"max_total_output", 1, static_cast<std::int64_t>(GiB),
         [](L& l, std::int64_t v) { l.max_total_output = static_cast<std::uint64_t>(v); }},
    });
}

BOOST_AUTO_TEST_CASE(extreme_values_are_rejected_not_clamped)
{
    sandbox_limits l;
    l.max_commands = UINT32_MAX;
    BOOST_TEST(!l.validate().has_value());
    BOOST_TEST(l.max_commands == UINT32_MAX);  // validate() never rewrites a field
    l = {};
    l.max_output_bytes = UINT64_MAX;
    BOOST_TEST(!l.validate().has_value());
    l = {};
    l.wall_time = milliseconds(-1);
    BOOST_TEST(!l.validate().has_value());
    l = {};
    l.cleanup_deadline = milliseconds::min();
    BOOST_TEST(!l.validate().has_value());
    process_session_limits s;
    s.max_lifetime = milliseconds::max();
    BOOST_TEST(!s.validate().has_value());
}

BOOST_AUTO_TEST_CASE(env_name_rules)
{
    for (std::string ok : {"A", "_", "PATH", "_x1", "abc_DEF_123", "a0"}) BOOST_TEST(is_valid_env_name(ok), ok);
    for (std::string bad : {"", "1A", "A-B", "A B", "A=B", "A.B", "Ä", "$X", "X\n"})
        BOOST_TEST(!is_valid_env_name(bad), bad);
    BOOST_TEST(!is_valid_env_name(std::string_view("A\0B", 3)));
}

BOOST_AUTO_TEST_CASE(command_nul_bytes_are_rejected)
{
    sandbox_limits const limits;
    std::string const nul("a\0b", 3);
    auto expect_invalid = [&](result<void> r) {
        BOOST_REQUIRE(!r.has_value());
        BOOST_TEST((r.error() == errc::invalid_argument));
    };
    BOOST_TEST(validate_command("/bin/echo", {"ok", ""}, {{"A", "1"}}, limits).has_value());
    expect_invalid(validate_command(nul, {}, {}, limits));
    expect_invalid(validate_command("/bin/echo", {"ok", nul}, {}, limits));
    expect_invalid(validate_command("/bin/echo", {}, {{nul, "v"}}, limits));
    expect_invalid(validate_command("/bin/echo", {}, {{"A", nul}}, limits));
    expect_invalid(validate_command("", {}, {}, limits));
    expect_invalid(validate_command("/bin/echo", {}, {{"1BAD", "v"}}, limits));
    expect_invalid(validate_command("/bin/echo", {}, {{"KEY=secret-value", "v"}}, limits));
    // Messages do not echo contents (a bad "name" may carry a value).
    auto r = validate_command("/bin/echo", {}, {{"KEY=secret-value", "v"}}, limits);
    BOOST_TEST(r.error().message().find("secret-value") == std::string::npos);
    auto a = validate_command("/bin/echo", {"top-secret\0x"}, {}, limits);
    BOOST_TEST(a.has_value());  // a C string literal stops at the NUL: "top-secret" is fine
    auto b = validate_command("/bin/echo", {std::string("top-secret\0x", 12)}, {}, limits);
    BOOST_REQUIRE(!b.has_value());
    BOOST_TEST(b.error().message().find("top-secret") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(command_env_caps)
{
    sandbox_limits limits;
    limits.max_env_names = 3;
    limits.max_env_bytes = 20;
    BOOST_REQUIRE(limits.validate().has_value());

    env_map three{{"A", "1"}, {"B", "2"}, {"C", "3"}};
    BOOST_TEST(validate_command("/bin/true", {}, three, limits).has_value());
    env_map four = three;
    four["D"] = "4";
    auto r = validate_command("/bin/true", {}, four, limits);
    BOOST_REQUIRE(!r.has_value());
    BOOST_TEST((r.error() == errc::limit_exceeded));

    // Bytes count names plus values: 2 + 18 = 20 is at the cap, 21 is over.
    BOOST_TEST(validate_command("/bin/true", {}, {{"AB", std::string(18, 'x')}}, limits).has_value());
    auto over = validate_command("/bin/true", {}, {{"AB", std::string(19, 'x')}}, limits);
    BOOST_REQUIRE(!over.has_value());
    BOOST_TEST((over.error() == errc::limit_exceeded));

    sandbox_limits none;
    none.max_env_names = 0;
    none.max_env_bytes = 0;
    BOOST_TEST(validate_command("/bin/true", {}, {}, none).has_value());
    BOOST_TEST((validate_command("/bin/true", {}, {{"A", ""}}, none).error() == errc::limit_exceeded));

    // The contract's defaults: 64 names / 64 KiB.
    sandbox_limits const defaults;
    env_map many;
    for (int i = 0; i < 64; ++i) many["V" + std::to_string(i)] = "x";
    BOOST_TEST(validate_command("/bin/true", {}, many, defaults).has_value());
    many["V64"] = "x";
    BOOST_TEST((validate_command("/bin/true", {}, many, defaults).error() == errc::limit_exceeded));
    BOOST_TEST((validate_command("/bin/true", {}, {{"BIG", std::string(64 * KiB, 'x')}}, defaults).error() ==
                errc::limit_exceeded));
}

BOOST_AUTO_TEST_CASE(signal_names)
{
    for (std::string t : {"SIGTERM", "TERM", "sigterm", "term", "SigTerm"})
        BOOST_TEST((parse_process_signal(t) == process_signal::sigterm), t);
    for (std::string k : {"SIGKILL", "KILL", "sigkill", "kill"})
        BOOST_TEST((parse_process_signal(k) == process_signal::sigkill), k);
    for (std::string bad : {"", "SIG", "SIGINT", "9", "15", "SIGTERMX", " SIGTERM", "SIGSIGTERM"})
        BOOST_TEST(!parse_process_signal(bad).has_value(), bad);
}

BOOST_AUTO_TEST_CASE(envd_target_from_handle_and_info)
{
    e2b::sandbox_handle h;
    h.sandbox_id = "sbx1";
    h.envd_access_token = "tok-123456";
    h.domain = "e2b.example";
    h.envd_version = "0.5.7";
    auto t = e2b::envd_target::from(h);
    BOOST_TEST(t.sandbox_id == "sbx1");
    BOOST_TEST(t.access_token.value_or("") == "tok-123456");
    BOOST_TEST(t.domain.value_or("") == "e2b.example");
    BOOST_TEST(t.envd_version == "0.5.7");

    e2b::sandbox_info i;
    i.sandbox_id = "sbx2";
    i.envd_version = "0.5.1";
    auto u = e2b::envd_target::from(i);
    BOOST_TEST(u.sandbox_id == "sbx2");
    BOOST_TEST(!u.access_token.has_value());
    BOOST_TEST(!u.domain.has_value());
    BOOST_TEST(u.envd_version == "0.5.1");
}

BOOST_AUTO_TEST_SUITE_END()
