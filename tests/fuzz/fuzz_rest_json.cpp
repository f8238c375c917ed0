// Control-plane REST answers: the first byte picks the schema (Sandbox,
// SandboxDetail, ListedSandbox[]), the rest is the body. Any input gives either
// a value or a typed protocol_error, never a crash, hang or UB. Parsed access
// tokens are held by the redactor under their sandbox id; each input's are
// released, as a kill would, so the redactor stays at its starting size.
#include <prism_e2b/redactor.hpp>

#include "fuzz_input.hpp"
#include "wire/rest_json.hpp"

using namespace prism_e2b;
namespace rest = prism_e2b::wire::rest;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    if (size == 0) return 0;
    auto const body = fuzz::as_text(data + 1, size - 1);
    constexpr char const* msg = "a bad answer is a protocol_error";
    auto& redactor = secret_redactor::global();
    switch (data[0] % 3) {
        case 0: {
            auto r = rest::parse_sandbox(body);
            fuzz::require_value_or(r, errc::protocol_error, msg);
            if (r) redactor.release(r->sandbox_id);
            break;
        }
        case 1: {
            auto r = rest::parse_sandbox_detail(body);
            fuzz::require_value_or(r, errc::protocol_error, msg);
            if (r) redactor.release(r->sandbox_id);
            break;
        }
        default: {
            auto r = rest::parse_sandbox_list(body);
            fuzz::require_value_or(r, errc::protocol_error, msg);
            if (r)
                for (auto const& s : *r) redactor.release(s.sandbox_id);
            break;
        }
    }
    fuzz::require(redactor.size() == 0, "every parsed token is released with its sandbox");
    return 0;
}
