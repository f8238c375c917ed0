#include "emulator/random_ids.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdexcept>
#include <vector>

namespace prism_e2b::local::detail {

std::string random_id(std::size_t length)
{
    static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::string out;
    while (out.size() < length) {
        unsigned char buf[64];
        if (RAND_bytes(buf, sizeof buf) != 1) throw std::runtime_error("RAND_bytes failed");
        for (unsigned char b : buf)
            if (b < 252 && out.size() < length)  // 252 = 7 * 36: no modulo bias
                out.push_back(alphabet[b % 36]);
    }
    return out;
}

std::string random_hex(std::size_t bytes)
{
    std::vector<unsigned char> buf(bytes);
    if (RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1) throw std::runtime_error("RAND_bytes failed");
    static constexpr char hexd[] = "0123456789abcdef";
    std::string out;
    for (auto b : buf) {
        out.push_back(hexd[b >> 4]);
        out.push_back(hexd[b & 15]);
    }
    return out;
}

bool secure_equals(std::string_view a, std::string_view b) noexcept
{
    if (a.size() != b.size()) return false;
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace prism_e2b::local::detail
