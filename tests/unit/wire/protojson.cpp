// protobuf-JSON mapping: request bodies as the official SDK writes them, and
// lenient response parsing (names or numbers, int64 strings, unknown fields).
#include "wire/protojson.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <limits>

using namespace prism_e2b;
using namespace prism_e2b::wire;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(test_protojson)

BOOST_AUTO_TEST_CASE(start_request_matches_the_official_sdk)
{
    e2b::start_process_params p;
    p.process.cmd = "/bin/bash";
    p.process.args = {"-l", "-c", "echo hi"};
    p.process.envs = {{"A", "1"}};
    p.process.cwd = "/workspace";
    BOOST_TEST(
        protojson::start_request(p) ==
        R"({"process":{"cmd":"/bin/bash","args":["-l","-c","echo hi"],"envs":{"A":"1"},"cwd":"/workspace"},"stdin":false})");
    e2b::start_process_params q;
    q.process.cmd = "ls";
    q.stdin = true;
    q.tag = "t1";
    BOOST_TEST(protojson::start_request(q) == R"({"process":{"cmd":"ls"},"tag":"t1","stdin":true})");
}

BOOST_AUTO_TEST_CASE(selector_and_signal_requests)
{
    e2b::process_selector s;
    s.pid = 7;
    BOOST_TEST(*protojson::send_signal_request(s, process_signal::sigkill) ==
               R"({"process":{"pid":7},"signal":"SIGNAL_SIGKILL"})");
    BOOST_TEST(*protojson::send_signal_request(s, process_signal::sigterm) ==
               R"({"process":{"pid":7},"signal":"SIGNAL_SIGTERM"})");
    BOOST_TEST(*protojson::selector_request(s) == R"({"process":{"pid":7}})");
    BOOST_TEST(*protojson::send_input_request(s, "hi\n") == R"({"process":{"pid":7},"input":{"stdin":"aGkK"}})");
    e2b::process_selector t;
    t.tag = "web";
    BOOST_TEST(*protojson::selector_request(t) == R"({"process":{"tag":"web"}})");
    BOOST_TEST((protojson::selector_request({}).error() == errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(events)
{
    auto s = protojson::parse_process_event(R"({"event":{"start":{"pid":42}},"unknown":1})");
    BOOST_TEST(std::get<e2b::start_event>(*s).pid == 42u);
    auto d = protojson::parse_process_event(R"({"event":{"data":{"stderr":"aGkK"}}})");
    BOOST_TEST(std::get<e2b::data_event>(*d).bytes == "hi\n");
    BOOST_TEST((std::get<e2b::data_event>(*d).stream == e2b::data_event::stream_kind::stderr_data));
    // URL-safe and unpadded base64 are accepted as protobuf-JSON requires.
    auto u = protojson::parse_process_event(R"({"event":{"data":{"stdout":"_-8"}}})");
    BOOST_TEST(std::get<e2b::data_event>(*u).bytes == "\xff\xef");
    auto e0 = protojson::parse_process_event(R"({"event":{"end":{"exited":true,"status":"exit status 0"}}})");
    BOOST_TEST(std::get<e2b::end_event>(*e0).exit_code == 0);
    BOOST_TEST(std::get<e2b::end_event>(*e0).exited);
    auto ek =
        protojson::parse_process_event(R"({"event":{"end":{"exitCode":-1,"exited":false,"status":"signal: killed"}}})");
    BOOST_TEST(std::get<e2b::end_event>(*ek).exit_code == -1);
    BOOST_TEST(!std::get<e2b::end_event>(*ek).exited);
    auto es = protojson::parse_process_event(R"({"event":{"end":{"exit_code":"7","error":"boom"}}})");
    BOOST_TEST(std::get<e2b::end_event>(*es).exit_code == 7);
    BOOST_TEST(*std::get<e2b::end_event>(*es).error == "boom");
    auto k = protojson::parse_process_event(R"({"event":{"keepalive":{}}})");
    BOOST_TEST(std::holds_alternative<e2b::keepalive_event>(*k));
    BOOST_TEST((protojson::parse_process_event(R"({"event":{}})").error() == errc::protocol_error));
    BOOST_TEST((protojson::parse_process_event(R"([1])").error() == errc::protocol_error));
    BOOST_TEST((protojson::parse_process_event(R"({"event":{"start":{"pid":"x"}}})").error() == errc::protocol_error));
    BOOST_TEST((protojson::parse_process_event(R"({"event":{"end":{"exitCode":4294967296}}})").error() ==
                errc::protocol_error));
}

BOOST_AUTO_TEST_CASE(entries_with_enum_names_or_numbers_and_int64_strings)
{
    auto a = protojson::parse_entry_response(
        R"({"entry":{"name":"a","type":"FILE_TYPE_DIRECTORY","path":"/a","size":"12345678901","mode":493,"modifiedTime":"2024-01-01T00:00:00Z","future":true}})");
    BOOST_TEST_REQUIRE(a.has_value());
    BOOST_TEST((a->type == e2b::file_type::directory));
    BOOST_TEST(a->size == 12345678901LL);
    BOOST_TEST(a->mode == 493u);
    BOOST_TEST(a->modified_time == "2024-01-01T00:00:00Z");
    auto b = protojson::parse_entry_response(R"({"entry":{"name":"b","type":1,"size":3,"symlinkTarget":"/x"}})");
    BOOST_TEST((b->type == e2b::file_type::file));
    BOOST_TEST(*b->symlink_target == "/x");
    auto l = protojson::parse_list_dir_response(R"({"entries":[{"name":"x","type":"FILE_TYPE_SYMLINK"}]})");
    BOOST_TEST(l->size() == 1u);
    BOOST_TEST(protojson::parse_list_dir_response("{}")->empty());
    BOOST_TEST((protojson::parse_entry_response(R"({"entry":{"size":"12a"}})").error() == errc::protocol_error));
}

BOOST_AUTO_TEST_CASE(doubles_at_the_int64_boundary_are_range_checked)
{
    // 2^63 as a double compared equal to double(INT64_MAX) and was converted: undefined behaviour.
    auto const at = protojson::parse_entry_response(R"({"entry":{"name":"a","size":9223372036854775808.0}})");
    BOOST_TEST((at.error() == errc::protocol_error));
    auto const below = protojson::parse_entry_response(R"({"entry":{"name":"a","size":9223372036854774784.0}})");
    BOOST_TEST_REQUIRE(below.has_value());
    BOOST_TEST(below->size == 9223372036854774784LL);
    auto const lowest = protojson::parse_entry_response(R"({"entry":{"name":"a","size":-9223372036854775808.0}})");
    BOOST_TEST_REQUIRE(lowest.has_value());
    BOOST_TEST(lowest->size == std::numeric_limits<std::int64_t>::min());
    auto const pid = protojson::parse_process_event(R"({"event":{"start":{"pid":4294967296.0}}})");
    BOOST_TEST((pid.error() == errc::protocol_error));
}

BOOST_AUTO_TEST_CASE(process_list_and_end_of_stream)
{
    auto l = protojson::parse_list_response(
        R"({"processes":[{"config":{"cmd":"sleep","args":["9"],"envs":{"K":"V"},"cwd":"/w"},"pid":5,"tag":"t"}]})");
    BOOST_TEST_REQUIRE(l->size() == 1u);
    BOOST_TEST((*l)[0].pid == 5u);
    BOOST_TEST((*l)[0].config.args[0] == "9");
    BOOST_TEST((*l)[0].config.envs.at("K") == "V");
    BOOST_TEST(*(*l)[0].tag == "t");
    BOOST_TEST(!protojson::parse_end_of_stream("{}")->failed);
    auto e = protojson::parse_end_of_stream(R"({"error":{"code":"not_found","message":"no pid"},"metadata":{}})");
    BOOST_TEST(e->failed);
    BOOST_TEST(e->code == "not_found");
    BOOST_TEST(e->message == "no pid");
}

BOOST_AUTO_TEST_CASE(watch_dir_request_and_responses)
{
    e2b::watch_dir_params p;
    p.path = "/workspace";
    BOOST_TEST(protojson::watch_dir_request(p) == R"({"path":"/workspace"})");
    p.recursive = true;
    p.include_entry = true;
    BOOST_TEST(protojson::watch_dir_request(p) == R"({"path":"/workspace","recursive":true,"includeEntry":true})");

    BOOST_TEST(std::holds_alternative<protojson::watch_start>(*protojson::parse_watch_response(R"({"start":{}})")));
    BOOST_TEST(
        std::holds_alternative<protojson::watch_keepalive>(*protojson::parse_watch_response(R"({"keepalive":{}})")));
    auto ev = protojson::parse_watch_response(
        R"({"filesystem":{"name":"sub/a","type":"EVENT_TYPE_WRITE","entry":{"name":"a","type":"FILE_TYPE_FILE","path":"/workspace/sub/a","size":"3"}}})");
    BOOST_REQUIRE(ev);
    auto const& fe = std::get<e2b::fs_event>(*ev);
    BOOST_TEST(fe.name == "sub/a");
    BOOST_TEST((fe.type == e2b::fs_event_type::write));
    BOOST_REQUIRE(fe.entry);
    BOOST_TEST(fe.entry->size == 3);
    // Enum numbers as protobuf-JSON allows, unknown names as the default, no entry.
    auto num = protojson::parse_watch_response(R"({"filesystem":{"name":"b","type":3}})");
    BOOST_REQUIRE(num);
    BOOST_TEST((std::get<e2b::fs_event>(*num).type == e2b::fs_event_type::remove));
    BOOST_TEST(!std::get<e2b::fs_event>(*num).entry);
    auto unknown = protojson::parse_watch_response(R"({"filesystem":{"name":"c","type":"EVENT_TYPE_NEW"}})");
    BOOST_REQUIRE(unknown);
    BOOST_TEST((std::get<e2b::fs_event>(*unknown).type == e2b::fs_event_type::unspecified));
    // Malformed: a typed protocol error.
    for (char const* bad : {R"({})", R"({"filesystem":7})", R"({"filesystem":{"name":1}})", "not json",
                            R"({"filesystem":{"name":"x","entry":[]}})"}) {
        auto r = protojson::parse_watch_response(bad);
        BOOST_TEST_REQUIRE(!r, bad);
        BOOST_TEST((r.error() == errc::protocol_error), bad);
    }
}

BOOST_AUTO_TEST_SUITE_END()
