// Control-plane REST answers: the first byte picks the schema (Sandbox,
// SandboxDetail, ListedSandbox[]), the rest is the body. Any input gives either
// a value or a typed protocol_error, never a crash, hang or UB.
#include "fuzz_input.hpp"
#include "wire/rest_json.hpp"

using namespace prism_e2b;
namespace rest = prism_e2b::wire::rest;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    if (size == 0) return 0;
    auto const body = fuzz::as_text(data + 1, size - 1);
    constexpr char const* msg = "a bad answer is a protocol_error";
    switch (data[0] % 3) {
        case 0:
            fuzz::require_value_or(rest::parse_sandbox(body), errc::protocol_error, msg);
            break;
        case 1:
            fuzz::require_value_or(rest::parse_sandbox_detail(body), errc::protocol_error, msg);
            break;
        default:
            fuzz::require_value_or(rest::parse_sandbox_list(body), errc::protocol_error, msg);
            break;
    }
    return 0;
}
