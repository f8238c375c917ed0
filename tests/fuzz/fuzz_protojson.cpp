// protobuf-JSON answers of envd (the process and filesystem services): the
// first byte picks the message, the rest is its JSON. Any input gives either a
// value or a typed protocol_error, never a crash, hang or UB.
#include "fuzz_input.hpp"
#include "wire/protojson.hpp"

using namespace prism_e2b;
namespace pj = prism_e2b::wire::protojson;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    if (size == 0) return 0;
    auto const json = fuzz::as_text(data + 1, size - 1);
    constexpr char const* msg = "a bad answer is a protocol_error";
    switch (data[0] % 6) {
        case 0:
            fuzz::require_value_or(pj::parse_process_event(json), errc::protocol_error, msg);
            break;
        case 1:
            fuzz::require_value_or(pj::parse_list_response(json), errc::protocol_error, msg);
            break;
        case 2:
            fuzz::require_value_or(pj::parse_entry_response(json), errc::protocol_error, msg);
            break;
        case 3:
            fuzz::require_value_or(pj::parse_list_dir_response(json), errc::protocol_error, msg);
            break;
        case 4:
            fuzz::require_value_or(pj::parse_upload_response(json), errc::protocol_error, msg);
            break;
        default:
            fuzz::require_value_or(pj::parse_end_of_stream(json), errc::protocol_error, msg);
            break;
    }
    return 0;
}
