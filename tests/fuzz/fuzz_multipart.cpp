// multipart/form-data (envd POST /files): the first line is the Content-Type,
// the rest the body. Parts point into the body, in order, without overlap.
#include "emulator/multipart.hpp"
#include "fuzz_input.hpp"

using namespace prism_e2b;
using namespace prism_e2b::local::detail;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    auto const text = fuzz::as_text(data, size);
    auto const nl = text.find('\n');
    if (nl == std::string_view::npos) return 0;
    auto const boundary = multipart_boundary(text.substr(0, nl));
    if (!boundary) return 0;
    auto const body = text.substr(nl + 1);
    auto const parts = parse_multipart(body, *boundary);
    if (!parts) return 0;
    char const* last = body.data();
    for (auto const& p : *parts) {
        fuzz::require(p.content.data() >= last && p.content.data() + p.content.size() <= body.data() + body.size(),
                      "parts lie inside the body, in order");
        last = p.content.data() + p.content.size();
    }
    return 0;
}
