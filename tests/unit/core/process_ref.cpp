#include <prism_e2b/process.hpp>
#include <prism_e2b/process_ref.hpp>

#include "protocol/base64.hpp"

#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

using namespace prism_e2b;

namespace {

std::string const fp_echo_ok = "7bff53ba091fa9fd69976d3cdf5b4aaf1136a3271a77806e525d45459f4abc2f";

process_ref_record sample() { return {"i5dfbtk0kzmf2ujbp9yzs", 4242, fp_echo_ok, "/home/user/work"}; }

// A ref whose payload is exactly `json` (for hand-made malformed records).
std::string ref_of(std::string_view json) { return std::string(process_ref_prefix) + detail::base64url_encode(json); }

std::string record_json(std::string_view v, std::string_view sandbox, std::string_view pid, std::string_view fp,
                        std::string_view ws)
{
    return std::string("{\"v\":") + std::string(v) + ",\"sandbox\":" + std::string(sandbox) +
           ",\"pid\":" + std::string(pid) + ",\"fp\":" + std::string(fp) + ",\"ws\":" + std::string(ws) + "}";
}

std::string const q_sandbox = "\"i5dfbtk0kzmf2ujbp9yzs\"";
std::string const q_fp = "\"" + fp_echo_ok + "\"";
std::string const q_ws = "\"/home/user/work\"";

}  // namespace

BOOST_AUTO_TEST_SUITE(test_process_ref)

BOOST_AUTO_TEST_CASE(round_trip)
{
    auto const rec = sample();
    auto const ref = encode_process_ref(rec);
    BOOST_TEST(ref.starts_with(process_ref_prefix));
    BOOST_TEST(ref.find('=') == std::string::npos);
    BOOST_TEST(ref.find('+') == std::string::npos);
    BOOST_TEST(ref.find('/') == std::string::npos);
    auto const back = decode_process_ref(ref);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST((*back == rec));

    // The payload is the documented JSON, field order included.
    auto payload = detail::base64url_decode(ref.substr(process_ref_prefix.size()));
    BOOST_REQUIRE(payload.has_value());
    BOOST_TEST(*payload == record_json("1", q_sandbox, "4242", q_fp, q_ws));
}

BOOST_AUTO_TEST_CASE(hand_made_canonical_record_is_accepted)
{
    auto r = decode_process_ref(ref_of(record_json("1", q_sandbox, "4242", q_fp, q_ws)));
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST((*r == sample()));
}

BOOST_AUTO_TEST_CASE(boundary_values_are_accepted)
{
    process_ref_record rec{std::string(128, 'a'), 4294967295u, fp_echo_ok, "/" + std::string(1023, 'w')};
    auto ref = encode_process_ref(rec);
    BOOST_TEST(ref.size() <= max_process_ref_length);
    auto back = decode_process_ref(ref);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST((*back == rec));
    BOOST_TEST(decode_process_ref(encode_process_ref({"A-b_c.9", 1, fp_echo_ok, "/"})).has_value());
}

BOOST_AUTO_TEST_CASE(wrong_prefix_is_rejected)
{
    auto const ref = encode_process_ref(sample());
    auto const body = ref.substr(process_ref_prefix.size());
    for (std::string bad : {"prism-e2b-proc" + body, "PRISM-E2B-PROC:" + body, "prism-e2b-ref:" + body, " " + ref,
                            "x" + ref, body, std::string("prism-e2b-proc:"), std::string()}) {
        BOOST_TEST(!decode_process_ref(bad).has_value(), "accepted: " << bad);
    }
}

BOOST_AUTO_TEST_CASE(padding_and_bad_base64url_are_rejected)
{
    auto const ref = encode_process_ref(sample());
    BOOST_TEST(!decode_process_ref(ref + "=").has_value());
    BOOST_TEST(!decode_process_ref(ref + "==").has_value());
    // A payload whose length is not a multiple of 3 with standard padding added.
    auto const json = record_json("1", q_sandbox, "42", q_fp, q_ws);
    auto const padded = std::string(process_ref_prefix) + detail::base64_encode(json);
    BOOST_REQUIRE(padded.find('=') != std::string::npos);
    BOOST_TEST(!decode_process_ref(padded).has_value());
    BOOST_TEST(decode_process_ref(ref_of(json)).has_value());

    std::string with_plus = ref;
    with_plus[with_plus.size() / 2] = '+';
    BOOST_TEST(!decode_process_ref(with_plus).has_value());
    std::string with_slash = ref;
    with_slash[with_slash.size() / 2] = '/';
    BOOST_TEST(!decode_process_ref(with_slash).has_value());
    BOOST_TEST(!decode_process_ref(ref + "A").has_value());  // length 1 mod 4 or garbage byte
    BOOST_TEST(!decode_process_ref(ref.substr(0, ref.size() - 1) + "*").has_value());
    BOOST_TEST(!decode_process_ref(ref + "\n").has_value());
    BOOST_TEST(!decode_process_ref(ref.substr(0, 20) + " " + ref.substr(20)).has_value());
}

BOOST_AUTO_TEST_CASE(non_canonical_trailing_bits_are_rejected)
{
    // "{}1" style payloads: find a record whose base64url ends in a partial
    // group, then set the unused low bits.
    auto json = record_json("1", q_sandbox, "42", q_fp, q_ws);
    auto enc = detail::base64url_encode(json);
    BOOST_REQUIRE(enc.size() % 4 != 0);
    static constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    auto idx = alphabet.find(enc.back());
    enc.back() = alphabet[idx | 1];  // low bit is always unused in a partial group
    BOOST_TEST(!decode_process_ref(std::string(process_ref_prefix) + enc).has_value());
}

BOOST_AUTO_TEST_CASE(bad_json_is_rejected)
{
    std::vector<std::string> const bad_inputs = {
        "",
        "{",
        "}",
        "[]",
        "1",
        "null",
        "\"x\"",
        "{\"v\":1",
        "not json at all",
        "[1,\"a\",2,\"b\",\"c\"]",
        "{\"v\":1,\"sandbox\":\"a\",\"pid\":1,\"fp\":\"" + fp_echo_ok + "\",\"ws\":\"/\"}garbage",
        "\xff\xfe\xfd",
        "{\"v\":1,\"sandbox\":\"\xc3\x28\",\"pid\":1,\"fp\":\"" + fp_echo_ok + "\",\"ws\":\"/\"}",
        "{\"v\":1,\"sandbox\":{\"x\":1},\"pid\":1,\"fp\":\"" + fp_echo_ok + "\",\"ws\":\"/\"}",
        "{\"v\":1,\"sandbox\":[\"a\"],\"pid\":1,\"fp\":\"" + fp_echo_ok + "\",\"ws\":\"/\"}"};
    for (auto const& bad : bad_inputs) {
        BOOST_TEST(!decode_process_ref(ref_of(bad)).has_value(), "accepted: " << bad);
    }
}

BOOST_AUTO_TEST_CASE(wrong_types_and_values_are_rejected)
{
    std::vector<std::string> bad = {
        record_json("\"1\"", q_sandbox, "42", q_fp, q_ws),
        record_json("2", q_sandbox, "42", q_fp, q_ws),
        record_json("0", q_sandbox, "42", q_fp, q_ws),
        record_json("1.0", q_sandbox, "42", q_fp, q_ws),
        record_json("true", q_sandbox, "42", q_fp, q_ws),
        record_json("1", "5", "42", q_fp, q_ws),
        record_json("1", "null", "42", q_fp, q_ws),
        record_json("1", "\"\"", "42", q_fp, q_ws),
        record_json("1", "\"a/b\"", "42", q_fp, q_ws),
        record_json("1", "\"a b\"", "42", q_fp, q_ws),
        record_json("1", "\"" + std::string(129, 'a') + "\"", "42", q_fp, q_ws),
        record_json("1", q_sandbox, "\"42\"", q_fp, q_ws),
        record_json("1", q_sandbox, "0", q_fp, q_ws),
        record_json("1", q_sandbox, "-1", q_fp, q_ws),
        record_json("1", q_sandbox, "4294967296", q_fp, q_ws),
        record_json("1", q_sandbox, "18446744073709551615", q_fp, q_ws),
        record_json("1", q_sandbox, "42.5", q_fp, q_ws),
        record_json("1", q_sandbox, "4.2e1", q_fp, q_ws),
        record_json("1", q_sandbox, "42", "42", q_ws),
        record_json("1", q_sandbox, "42", "\"" + std::string(63, 'a') + "\"", q_ws),
        record_json("1", q_sandbox, "42", "\"" + std::string(65, 'a') + "\"", q_ws),
        record_json("1", q_sandbox, "42", "\"7BFF53BA091FA9FD69976D3CDF5B4AAF1136A3271A77806E525D45459F4ABC2F\"", q_ws),
        record_json("1", q_sandbox, "42", "\"" + std::string(63, 'a') + "g\"", q_ws),
        record_json("1", q_sandbox, "42", q_fp, "\"relative/path\""),
        record_json("1", q_sandbox, "42", q_fp, "\"\""),
        record_json("1", q_sandbox, "42", q_fp, "1"),
        record_json("1", q_sandbox, "42", q_fp, "\"/a\\u0000b\""),
        record_json("1", q_sandbox, "42", q_fp, "\"/" + std::string(1024, 'w') + "\""),
    };
    for (auto const& json : bad) BOOST_TEST(!decode_process_ref(ref_of(json)).has_value(), "accepted: " << json);
}

BOOST_AUTO_TEST_CASE(extra_missing_duplicate_and_non_canonical_fields_are_rejected)
{
    auto const good = record_json("1", q_sandbox, "42", q_fp, q_ws);
    std::vector<std::string> bad = {
        good.substr(0, good.size() - 1) + ",\"token\":\"e2b_secret\"}",
        good.substr(0, good.size() - 1) + ",\"env\":{}}",
        "{\"v\":1,\"sandbox\":" + q_sandbox + ",\"pid\":42,\"fp\":" + q_fp + "}",
        "{\"v\":1,\"sandbox\":" + q_sandbox + ",\"pid\":42,\"fp\":" + q_fp + ",\"ws\":" + q_ws + ",\"ws\":" + q_ws +
            "}",
        "{\"v\":1,\"sandbox\":" + q_sandbox + ",\"pid\":42,\"fp\":" + q_fp + ",\"WS\":" + q_ws + "}",
        // Same record, other spellings: whitespace, order, escapes.
        "{ \"v\":1,\"sandbox\":" + q_sandbox + ",\"pid\":42,\"fp\":" + q_fp + ",\"ws\":" + q_ws + "}",
        "{\"sandbox\":" + q_sandbox + ",\"v\":1,\"pid\":42,\"fp\":" + q_fp + ",\"ws\":" + q_ws + "}",
        record_json("1", q_sandbox, "42", q_fp, "\"\\/home/user/work\""),
        record_json("1", q_sandbox, "042", q_fp, q_ws),
        good + "\n",
    };
    for (auto const& json : bad) BOOST_TEST(!decode_process_ref(ref_of(json)).has_value(), "accepted: " << json);
}

BOOST_AUTO_TEST_CASE(oversized_input_is_rejected)
{
    auto const ref = encode_process_ref(sample());
    std::string huge = ref + std::string(max_process_ref_length, 'A');
    BOOST_TEST(!decode_process_ref(huge).has_value());
    // A structurally valid record that encodes beyond the cap (ws itself is
    // legal up to 1024 characters; the sandbox id pushes it over).
    std::string long_ws = "/" + std::string(1023, 'w');
    std::string over = ref_of(record_json("1", "\"" + std::string(128, 'a') + "\"", "42", q_fp, "\"" + long_ws + "\"") +
                              std::string(600, ' '));
    BOOST_TEST(over.size() > max_process_ref_length);
    BOOST_TEST(!decode_process_ref(over).has_value());
    BOOST_TEST(!decode_process_ref(std::string(1 << 20, 'x')).has_value());
}

BOOST_AUTO_TEST_CASE(fuzz_never_crashes_and_accepts_only_canonical_refs)
{
    std::mt19937 rng(20261130);
    auto const seeds = std::vector<std::string>{
        encode_process_ref(sample()),
        encode_process_ref({"a", 1, fp_echo_ok, "/"}),
        encode_process_ref({std::string(128, 'Z'), 4294967295u, std::string(64, 'f'), "/" + std::string(900, 'x')}),
    };
    static constexpr std::string_view url_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };

    int accepted = 0, non_canonical_accepts = 0, seed_accepts = 0;
    constexpr int iterations = 20000;
    for (int i = 0; i < iterations; ++i) {
        std::string input;
        switch (i % 6) {
            case 0: {  // random bytes
                input.resize(pick(300));
                for (auto& c : input) c = static_cast<char>(pick(256));
                break;
            }
            case 1: {  // prefix + random base64url text
                input = std::string(process_ref_prefix);
                auto n = pick(400);
                for (std::size_t k = 0; k < n; ++k) input += url_alphabet[pick(url_alphabet.size())];
                break;
            }
            case 2: {  // byte-wise mutation of a valid ref
                input = seeds[pick(seeds.size())];
                auto flips = 1 + pick(4);
                for (std::size_t k = 0; k < flips; ++k) input[pick(input.size())] = static_cast<char>(pick(256));
                break;
            }
            case 3: {  // alphabet-preserving mutation, insertion or deletion
                input = seeds[pick(seeds.size())];
                auto pos = process_ref_prefix.size() + pick(input.size() - process_ref_prefix.size());
                switch (pick(3)) {
                    case 0:
                        input[pos] = url_alphabet[pick(url_alphabet.size())];
                        break;
                    case 1:
                        input.insert(input.begin() + pos, url_alphabet[pick(url_alphabet.size())]);
                        break;
                    default:
                        input.erase(pos, 1);
                        break;
                }
                break;
            }
            case 4: {  // truncation
                auto const& s = seeds[pick(seeds.size())];
                input = s.substr(0, pick(s.size() + 1));
                break;
            }
            default: {  // a mutated JSON payload, re-encoded validly
                auto const& s = seeds[pick(seeds.size())];
                auto json = *detail::base64url_decode(s.substr(process_ref_prefix.size()));
                auto flips = 1 + pick(3);
                for (std::size_t k = 0; k < flips; ++k) {
                    static constexpr char chars[] = "{}[]\",:0123456789-.eE \\/tfn\x00\x7f\xff";
                    static constexpr std::string_view interesting(chars, sizeof(chars) - 1);  // keeps the NUL
                    json[pick(json.size())] =
                        pick(2) ? interesting[pick(interesting.size())] : static_cast<char>(pick(256));
                }
                input = ref_of(json);
                break;
            }
        }
        auto r = decode_process_ref(input);  // must never crash or throw
        if (r) {
            ++accepted;
            if (encode_process_ref(*r) != input) ++non_canonical_accepts;
            for (auto const& s : seeds)
                if (s == input) ++seed_accepts;
        }
    }
    BOOST_TEST(non_canonical_accepts == 0);
    // Some JSON mutations legitimately yield other valid records (a digit of
    // the pid, a letter of the id); those are fine as long as they are canonical.
    BOOST_TEST_MESSAGE("fuzz: " << accepted << " of " << iterations << " inputs decoded");
    for (auto const& s : seeds) BOOST_TEST(decode_process_ref(s).has_value());
}

BOOST_AUTO_TEST_CASE(fingerprint_known_value_and_stability)
{
    // printf '%s' '["/bin/echo","ok"]' | sha256sum
    BOOST_TEST(command_fingerprint("/bin/echo", {"ok"}) == fp_echo_ok);
    // printf '%s' '["/bin/sleep","60"]' | sha256sum
    BOOST_TEST(command_fingerprint("/bin/sleep", {"60"}) ==
               "9e41e735869d3a4f15ea960514db747296260cd30ecb3eb6a2c6559e79d280f3");
    BOOST_TEST(command_fingerprint("/bin/echo", {"ok"}) == command_fingerprint("/bin/echo", {"ok"}));
    // Argument boundaries matter: ["a b"] is not ["a","b"].
    BOOST_TEST(command_fingerprint("/bin/echo", {"a b"}) != command_fingerprint("/bin/echo", {"a", "b"}));
    BOOST_TEST(command_fingerprint("/bin/echo", {}) != command_fingerprint("/bin/echo", {""}));
    auto fp = command_fingerprint("/bin/sh", {"-c", "echo \"quoted\" \\ \n done"});
    BOOST_TEST(fp.size() == 64u);
    BOOST_TEST(fp.find_first_not_of("0123456789abcdef") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(fingerprint_excludes_env)
{
    // The fingerprint is a function of file and args only: two requests that
    // differ only in env (e.g. a secret token) attest the same command.
    process_request a{"/bin/echo", {"ok"}};
    process_request b = a;
    a.env = {{"E2B_TOKEN", "secret-value-1"}};
    b.env = {{"OTHER", "x"}};
    BOOST_TEST(command_fingerprint(a.file, a.args) == command_fingerprint(b.file, b.args));
    BOOST_TEST(command_fingerprint(a.file, a.args) == fp_echo_ok);
    auto ref = encode_process_ref({"sbx", 7, command_fingerprint(a.file, a.args), "/w"});
    auto payload = *detail::base64url_decode(ref.substr(process_ref_prefix.size()));
    BOOST_TEST(payload.find("secret-value-1") == std::string::npos);
    BOOST_TEST(payload.find("E2B_TOKEN") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
