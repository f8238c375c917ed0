// protobuf-JSON mapping of the process.proto and filesystem.proto messages the
// client uses (e2b-spec/). Requests are written the way the official SDK's
// protobuf-es writes them (lowerCamelCase, defaults omitted, enums by name,
// bytes as standard base64). Responses are read leniently, as the protobuf-JSON
// spec requires: both field spellings, enums by name or number, int64 as string
// or number, unknown fields ignored, absent or null = default.
#ifndef PRISM_E2B_WIRE_PROTOJSON_HPP
#define PRISM_E2B_WIRE_PROTOJSON_HPP

#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/e2b/watch.hpp>
#include <prism_e2b/error.hpp>

#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace prism_e2b::wire::protojson {

// ---- requests (errors: errc::invalid_argument for an empty selector) --------
std::string start_request(e2b::start_process_params const& p);
result<std::string> selector_request(e2b::process_selector const& s);  ///< Connect, CloseStdin
result<std::string> send_input_request(e2b::process_selector const& s, std::string_view bytes);
result<std::string> send_signal_request(e2b::process_selector const& s, process_signal sig);
std::string path_request(std::string_view path);  ///< Stat, MakeDir, Remove
std::string list_dir_request(std::string_view path, std::uint32_t depth);
std::string move_request(std::string_view source, std::string_view destination);
std::string watch_dir_request(e2b::watch_dir_params const& p);  ///< WatchDir

// ---- responses (errors: errc::protocol_error naming the bad field) ----------
/// StartResponse / ConnectResponse: {"event":{...}}.
result<e2b::process_event> parse_process_event(std::string_view json);
/// ListResponse.
result<std::vector<e2b::process_info>> parse_list_response(std::string_view json);
/// StatResponse / MakeDirResponse / MoveResponse: {"entry":{...}}.
result<e2b::entry_info> parse_entry_response(std::string_view json);
/// ListDirResponse.
result<std::vector<e2b::entry_info>> parse_list_dir_response(std::string_view json);
/// POST /files answer (envd.yaml EntryInfo array, REST JSON, type "file"/"directory").
result<std::vector<e2b::entry_info>> parse_upload_response(std::string_view json);

/// One WatchDirResponse: {"start":{}}, {"filesystem":{...}} or {"keepalive":{}}.
struct watch_start {};
struct watch_keepalive {};
using watch_message = std::variant<watch_start, e2b::fs_event, watch_keepalive>;
result<watch_message> parse_watch_response(std::string_view json);

/// The end-of-stream message: {} or {"error":{"code":"...","message":"..."}}
/// (metadata ignored). Yields the error when there is one, else an empty error.
struct end_of_stream {
    bool failed = false;
    std::string code;
    std::string message;
};
result<end_of_stream> parse_end_of_stream(std::string_view json);

}  // namespace prism_e2b::wire::protojson

#endif
