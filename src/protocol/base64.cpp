#include "protocol/base64.hpp"

#include <array>
#include <cstdint>

namespace prism_e2b::detail {
namespace {

constexpr std::string_view std_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view url_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

constexpr std::uint8_t invalid = 0xff;

constexpr std::array<std::uint8_t, 256> make_table(std::string_view alphabet)
{
    std::array<std::uint8_t, 256> t{};
    for (auto& v : t) v = invalid;
    for (std::size_t i = 0; i < alphabet.size(); ++i)
        t[static_cast<unsigned char>(alphabet[i])] = static_cast<std::uint8_t>(i);
    return t;
}

constexpr auto std_table = make_table(std_alphabet);
constexpr auto url_table = make_table(url_alphabet);

std::string encode(std::string_view in, std::string_view alphabet, bool pad)
{
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    auto byte = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(in[k])); };
    for (; i + 3 <= in.size(); i += 3) {
        std::uint32_t n = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
        out += alphabet[n >> 18 & 63];
        out += alphabet[n >> 12 & 63];
        out += alphabet[n >> 6 & 63];
        out += alphabet[n & 63];
    }
    std::size_t rest = in.size() - i;
    if (rest == 1) {
        std::uint32_t n = byte(i) << 16;
        out += alphabet[n >> 18 & 63];
        out += alphabet[n >> 12 & 63];
        if (pad) out += "==";
    } else if (rest == 2) {
        std::uint32_t n = byte(i) << 16 | byte(i + 1) << 8;
        out += alphabet[n >> 18 & 63];
        out += alphabet[n >> 12 & 63];
        out += alphabet[n >> 6 & 63];
        if (pad) out += '=';
    }
    return out;
}

// Decodes unpadded symbols. A trailing group of 2 or 3 symbols must have its
// unused low bits zero, so every byte string has exactly one accepted encoding.
std::optional<std::string> decode_unpadded(std::string_view in, std::array<std::uint8_t, 256> const& table)
{
    if (in.size() % 4 == 1) return std::nullopt;
    std::string out;
    out.reserve(in.size() / 4 * 3 + 2);
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        std::uint8_t v = table[static_cast<unsigned char>(c)];
        if (v == invalid) return std::nullopt;
        acc = (acc << 6 | v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>(acc >> bits & 0xff);
        }
    }
    // Leftover bits (2 or 4) must be zero.
    if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
    return out;
}

}  // namespace

std::string base64_encode(std::string_view bytes) { return encode(bytes, std_alphabet, true); }

std::optional<std::string> base64_decode(std::string_view text)
{
    if (text.size() % 4 != 0) return std::nullopt;
    std::size_t pad = 0;
    if (!text.empty() && text.back() == '=') {
        pad = 1;
        if (text.size() >= 2 && text[text.size() - 2] == '=') pad = 2;
    }
    // Any other '=' is rejected by the table lookup below.
    return decode_unpadded(text.substr(0, text.size() - pad), std_table);
}

std::string base64url_encode(std::string_view bytes) { return encode(bytes, url_alphabet, false); }

std::optional<std::string> base64url_decode(std::string_view text) { return decode_unpadded(text, url_table); }

}  // namespace prism_e2b::detail
