// Connect-protocol envelope framing (sans-io): 1 flag byte, 4-byte big-endian
// length, then the message. Used by the client and by the local server.
#ifndef PRISM_E2B_PROTOCOL_ENVELOPE_HPP
#define PRISM_E2B_PROTOCOL_ENVELOPE_HPP

#include <prism_e2b/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::wire {

inline constexpr std::uint8_t envelope_flag_compressed = 0x01;
inline constexpr std::uint8_t envelope_flag_end_stream = 0x02;
inline constexpr std::size_t envelope_header_size = 5;

struct envelope {
    std::uint8_t flags = 0;
    std::string payload;

    bool end_stream() const noexcept { return (flags & envelope_flag_end_stream) != 0; }
};

/// Frames `payload` with `flags`.
std::string encode_envelope(std::string_view payload, std::uint8_t flags = 0);
void append_envelope(std::string& out, std::string_view payload, std::uint8_t flags = 0);

/// Incremental decoder: bytes may arrive split anywhere.
class envelope_decoder {
public:
    /// Messages longer than `max_message_bytes` are a protocol error (checked on
    /// the length prefix, before anything is buffered).
    explicit envelope_decoder(std::size_t max_message_bytes = 16u << 20) noexcept : max_(max_message_bytes) {}

    /// Consumes `bytes`, appending every complete envelope to `out`.
    /// Errors (errc::protocol_error, sticky): oversized length prefix, compressed
    /// flag (no compression is negotiated), unknown flag bits, data after the
    /// end-of-stream envelope.
    result<void> feed(std::string_view bytes, std::vector<envelope>& out);

    /// True when part of an envelope is buffered (the input ended mid-frame).
    bool has_partial() const noexcept { return !buffer_.empty(); }
    /// True once the end-of-stream envelope was decoded.
    bool saw_end_stream() const noexcept { return ended_; }

private:
    std::size_t max_;
    std::string buffer_;
    bool ended_ = false;
    bool failed_ = false;
};

}  // namespace prism_e2b::wire

#endif
