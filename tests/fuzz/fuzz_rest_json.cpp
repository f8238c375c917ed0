// Control-plane REST answers: the first byte picks the schema (Sandbox,
// SandboxDetail, ListedSandbox[]), the rest is the body. Any input gives either
// a value or a typed protocol_error, never a crash, hang or UB.
#include "fuzz_input.hpp"
#include "wire/rest_json.hpp"

using namespace prism_e2b;
namespace rest = prism_e2b::wire::rest;

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
    auto const body = fuzz::as_text(data + 1, size - 1);
    switch (data[0] % 3) {
        case 0:
            check(rest::parse_sandbox(body));
            break;
        case 1:
            check(rest::parse_sandbox_detail(body));
            break;
        default:
            check(rest::parse_sandbox_list(body));
            break;
    }
    return 0;
}
