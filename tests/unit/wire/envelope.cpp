// Connect envelope codec: split reads, batching, and every malformed input is a
// clear protocol_error (never a crash or a hang).
#include "protocol/envelope.hpp"

#include "wire/protojson.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::wire;

BOOST_AUTO_TEST_SUITE(test_envelope)

namespace {
std::string const start_json = R"({"event":{"start":{"pid":42}}})";
std::string const data_json = R"({"event":{"data":{"stdout":"aGkK"}}})";
std::string const end_json = R"({"event":{"end":{"exitCode":3,"exited":true,"status":"exit status 3"}}})";

std::string sample_stream()
{
    std::string s;
    append_envelope(s, start_json);
    append_envelope(s, data_json);
    append_envelope(s, end_json);
    append_envelope(s, "{}", envelope_flag_end_stream);
    return s;
}
}  // namespace

BOOST_AUTO_TEST_CASE(round_trip_header_layout)
{
    auto e = encode_envelope("abc", 0);
    BOOST_TEST(e.size() == 8u);
    BOOST_TEST(static_cast<unsigned char>(e[0]) == 0u);
    BOOST_TEST(static_cast<unsigned char>(e[4]) == 3u);
    std::string big(0x010203, 'x');
    auto b = encode_envelope(big, envelope_flag_end_stream);
    BOOST_TEST(static_cast<unsigned char>(b[0]) == 2u);
    BOOST_TEST(static_cast<unsigned char>(b[1]) == 0u);
    BOOST_TEST(static_cast<unsigned char>(b[2]) == 1u);
    BOOST_TEST(static_cast<unsigned char>(b[3]) == 2u);
    BOOST_TEST(static_cast<unsigned char>(b[4]) == 3u);
}

BOOST_AUTO_TEST_CASE(split_at_every_byte_boundary)
{
    auto const s = sample_stream();
    for (std::size_t cut = 0; cut <= s.size(); ++cut) {
        envelope_decoder d;
        std::vector<envelope> out;
        BOOST_TEST_REQUIRE(d.feed(std::string_view(s).substr(0, cut), out).has_value());
        BOOST_TEST_REQUIRE(d.feed(std::string_view(s).substr(cut), out).has_value());
        BOOST_TEST_REQUIRE(out.size() == 4u);
        BOOST_TEST(out[0].payload == start_json);
        BOOST_TEST(out[1].payload == data_json);
        BOOST_TEST(out[2].payload == end_json);
        BOOST_TEST(out[3].end_stream());
        BOOST_TEST(out[3].payload == "{}");
        BOOST_TEST(!d.has_partial());
        BOOST_TEST(d.saw_end_stream());
    }
}

BOOST_AUTO_TEST_CASE(one_byte_at_a_time)
{
    auto const s = sample_stream();
    envelope_decoder d;
    std::vector<envelope> out;
    for (char c : s) BOOST_TEST_REQUIRE(d.feed(std::string_view(&c, 1), out).has_value());
    BOOST_TEST(out.size() == 4u);
}

BOOST_AUTO_TEST_CASE(several_frames_in_one_read)
{
    envelope_decoder d;
    std::vector<envelope> out;
    BOOST_TEST_REQUIRE(d.feed(sample_stream(), out).has_value());
    BOOST_TEST(out.size() == 4u);
}

BOOST_AUTO_TEST_CASE(oversized_length_prefix_is_rejected_before_buffering)
{
    envelope_decoder d(1024);
    std::vector<envelope> out;
    std::string h{'\x00', '\x7f', '\xff', '\xff', '\xff'};
    auto r = d.feed(h, out);
    BOOST_TEST_REQUIRE(r.has_error());
    BOOST_TEST((r.error() == errc::protocol_error));
    BOOST_TEST(r.error().message().find("exceeds") != std::string::npos);
    // Sticky: later input does not resurrect the stream.
    BOOST_TEST(d.feed(encode_envelope("{}"), out).has_error());
    BOOST_TEST(out.empty());
}

BOOST_AUTO_TEST_CASE(compressed_flag_is_rejected)
{
    envelope_decoder d;
    std::vector<envelope> out;
    auto r = d.feed(encode_envelope("{}", envelope_flag_compressed), out);
    BOOST_TEST_REQUIRE(r.has_error());
    BOOST_TEST((r.error() == errc::protocol_error));
    BOOST_TEST(r.error().message().find("compress") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(unknown_flag_bits_are_rejected)
{
    envelope_decoder d;
    std::vector<envelope> out;
    auto r = d.feed(encode_envelope("{}", 0x80), out);
    BOOST_TEST_REQUIRE(r.has_error());
    BOOST_TEST((r.error() == errc::protocol_error));
}

BOOST_AUTO_TEST_CASE(truncated_frame_is_partial_not_a_message)
{
    envelope_decoder d;
    std::vector<envelope> out;
    auto full = encode_envelope(start_json);
    BOOST_TEST_REQUIRE(d.feed(full.substr(0, full.size() - 1), out).has_value());
    BOOST_TEST(out.empty());
    BOOST_TEST(d.has_partial());
    BOOST_TEST(!d.saw_end_stream());
    // Only a header fragment:
    envelope_decoder d2;
    BOOST_TEST_REQUIRE(d2.feed(full.substr(0, 3), out).has_value());
    BOOST_TEST(d2.has_partial());
}

BOOST_AUTO_TEST_CASE(data_after_end_of_stream_is_rejected)
{
    envelope_decoder d;
    std::vector<envelope> out;
    auto s = encode_envelope("{}", envelope_flag_end_stream) + encode_envelope(start_json);
    auto r = d.feed(s, out);
    BOOST_TEST_REQUIRE(r.has_error());
    BOOST_TEST((r.error() == errc::protocol_error));
}

BOOST_AUTO_TEST_CASE(invalid_json_payload_is_a_protocol_error)
{
    envelope_decoder d;
    std::vector<envelope> out;
    BOOST_TEST_REQUIRE(d.feed(encode_envelope("{\"event\":"), out).has_value());
    BOOST_TEST_REQUIRE(out.size() == 1u);
    auto ev = protojson::parse_process_event(out[0].payload);
    BOOST_TEST_REQUIRE(ev.has_error());
    BOOST_TEST((ev.error() == errc::protocol_error));
    auto eos = protojson::parse_end_of_stream("not json");
    BOOST_TEST((eos.error() == errc::protocol_error));
}

BOOST_AUTO_TEST_CASE(invalid_base64_payload_is_a_protocol_error)
{
    auto ev = protojson::parse_process_event(R"({"event":{"data":{"stdout":"!!!not base64"}}})");
    BOOST_TEST_REQUIRE(ev.has_error());
    BOOST_TEST((ev.error() == errc::protocol_error));
    BOOST_TEST(ev.error().message().find("base64") != std::string::npos);
    auto ev2 = protojson::parse_process_event(R"({"event":{"data":{"stdout":12}}})");
    BOOST_TEST((ev2.error() == errc::protocol_error));
}

BOOST_AUTO_TEST_CASE(empty_payload_and_zero_length_frames)
{
    envelope_decoder d;
    std::vector<envelope> out;
    BOOST_TEST_REQUIRE(d.feed(encode_envelope(""), out).has_value());
    BOOST_TEST_REQUIRE(out.size() == 1u);
    BOOST_TEST(out[0].payload.empty());
    BOOST_TEST((protojson::parse_process_event(out[0].payload).error() == errc::protocol_error));
}

BOOST_AUTO_TEST_SUITE_END()
