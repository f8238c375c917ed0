// Process refs: "prism-e2b-proc:" + base64url(JSON record), non-secret.
#ifndef PRISM_E2B_PROCESS_REF_HPP
#define PRISM_E2B_PROCESS_REF_HPP

#include <prism_e2b/export.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b {

inline constexpr std::string_view process_ref_prefix = "prism-e2b-proc:";
/// Longest ref decode_process_ref() looks at; longer input is rejected unread.
inline constexpr std::size_t max_process_ref_length = 2048;

/// What a ref attests. Nothing secret: no env, no tokens.
struct process_ref_record {
    std::string sandbox_id;           ///< the sandbox the process runs in
    std::uint32_t pid = 0;            ///< its pid there
    std::string command_fingerprint;  ///< command_fingerprint(file, args)
    std::string workspace;            ///< the workdir it was started in

    friend bool operator==(process_ref_record const&, process_ref_record const&) = default;  ///< field-wise equality
};

/// Lower-case hex SHA-256 of the compact JSON array [file, ...args] (env never
/// takes part), e.g. ["/bin/sleep","60"].
PRISM_E2B_API std::string command_fingerprint(std::string_view file, std::vector<std::string> const& args);

/// Encodes `record` as a ref. The JSON is {"v":1,"sandbox":..,"pid":..,"fp":..,"ws":..}
/// (compact, in this order). Only a record that meets decode_process_ref()'s
/// rules (sandbox id of 1..128 [A-Za-z0-9_.-], pid > 0, 64 lower-case hex
/// fingerprint, absolute workspace of at most 1024 bytes) decodes again.
PRISM_E2B_API std::string encode_process_ref(process_ref_record const& record);

/// Decodes a ref strictly: exact prefix, at most max_process_ref_length bytes,
/// base64url without padding, a JSON object with exactly the encoder's fields and
/// types, a 64-hex fingerprint and non-empty ids. Only the canonical spelling
/// (the encoder's exact output) is accepted. Anything else: std::nullopt.
/// Never throws.
PRISM_E2B_API std::optional<process_ref_record> decode_process_ref(std::string_view ref) noexcept;

}  // namespace prism_e2b

#endif
