// protobuf-JSON answers of envd (the process and filesystem services): the
// first byte picks the message, the rest is its JSON. Any input gives either a
// value or a typed protocol_error, never a crash, hang or UB.
#include "fuzz_input.hpp"
#include "wire/protojson.hpp"

using namespace prism_e2b;
namespace pj = prism_e2b::wire::protojson;

namespace {

template <class T>
void check(result<T> const& r)
{
    if (r) return;
    fuzz::require(r.error() == errc::protocol_error, "a bad answer is a protocol_error");
    fuzz::require(!r.error().message().empty(), "a protocol_error says what was wrong");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    if (size == 0) return 0;
    auto const json = fuzz::as_text(data + 1, size - 1);
    switch (data[0] % 6) {
        case 0:
            check(pj::parse_process_event(json));
            break;
        case 1:
            check(pj::parse_list_response(json));
            break;
        case 2:
            check(pj::parse_entry_response(json));
            break;
        case 3:
            check(pj::parse_list_dir_response(json));
            break;
        case 4:
            check(pj::parse_upload_response(json));
            break;
        default:
            check(pj::parse_end_of_stream(json));
            break;
    }
    return 0;
}
