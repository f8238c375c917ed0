// ASCII lower-casing, for what HTTP compares case-insensitively (header names,
// schemes, hosts, multipart parameters): both ends fold the same way, and no
// locale decides it.
#ifndef PRISM_E2B_PROTOCOL_ASCII_LOWER_HPP
#define PRISM_E2B_PROTOCOL_ASCII_LOWER_HPP

#include <string>
#include <string_view>

namespace prism_e2b::protocol {

inline std::string ascii_lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

}  // namespace prism_e2b::protocol

#endif  // PRISM_E2B_PROTOCOL_ASCII_LOWER_HPP
