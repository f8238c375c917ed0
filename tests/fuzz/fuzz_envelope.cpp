// Connect envelope decoder: bytes split anywhere decode exactly as in one
// piece, and what decodes re-encodes to the bytes consumed.
#include "fuzz_input.hpp"
#include "protocol/envelope.hpp"

using namespace prism_e2b;

namespace {

struct outcome {
    bool ok = true;
    std::vector<wire::envelope> envelopes;
    bool partial = false;
    bool ended = false;
};

outcome decode(std::string_view bytes, std::size_t step)
{
    wire::envelope_decoder d(1u << 16);
    outcome o;
    for (std::size_t i = 0; i < bytes.size() && o.ok; i += step)
        o.ok = d.feed(bytes.substr(i, step), o.envelopes).has_value();
    if (bytes.empty()) o.ok = d.feed({}, o.envelopes).has_value();
    o.partial = d.has_partial();
    o.ended = d.saw_end_stream();
    if (!o.ok) {
        std::vector<wire::envelope> more;
        fuzz::require(!d.feed("\x00\x00\x00\x00\x00", more) && more.empty(), "decoder errors are sticky");
    }
    return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    if (size == 0) return 0;
    std::size_t const step = 1 + data[0] % 13;
    auto const bytes = fuzz::as_text(data + 1, size - 1);
    auto const whole = decode(bytes, bytes.size() + 1);
    auto const pieces = decode(bytes, step);
    fuzz::require(whole.ok == pieces.ok, "split input fails like the whole input");
    if (!whole.ok) return 0;
    fuzz::require(whole.envelopes.size() == pieces.envelopes.size(), "same envelopes in pieces");
    std::string reencoded;
    for (std::size_t i = 0; i < whole.envelopes.size(); ++i) {
        auto const& a = whole.envelopes[i];
        auto const& b = pieces.envelopes[i];
        fuzz::require(a.flags == b.flags && a.payload == b.payload, "same envelope in pieces");
        fuzz::require(i + 1 == whole.envelopes.size() || !a.end_stream(), "nothing decodes after end-of-stream");
        wire::append_envelope(reencoded, a.payload, a.flags);
    }
    fuzz::require(bytes.substr(0, reencoded.size()) == reencoded, "decoded envelopes re-encode to their bytes");
    fuzz::require(whole.partial == (reencoded.size() < bytes.size()), "leftover bytes are reported as partial");
    fuzz::require(whole.ended == pieces.ended, "end-of-stream seen alike");
    return 0;
}
