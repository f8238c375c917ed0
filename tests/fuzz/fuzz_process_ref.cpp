// Process-ref decoder: never throws or crashes, and what it accepts is the
// canonical spelling (re-encoding the record gives back the input).
#include <prism_e2b/process_ref.hpp>

#include "fuzz_input.hpp"

using namespace prism_e2b;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    auto const ref = fuzz::as_text(data, size);
    auto const record = decode_process_ref(ref);
    if (!record) return 0;
    fuzz::require(encode_process_ref(*record) == ref, "an accepted ref is canonical");
    fuzz::require(record->pid > 0 && !record->sandbox_id.empty() && record->command_fingerprint.size() == 64 &&
                      record->workspace.starts_with("/"),
                  "an accepted ref meets the record rules");
    return 0;
}
