#include "protocol/envelope.hpp"

namespace prism_e2b::wire {

void append_envelope(std::string& out, std::string_view payload, std::uint8_t flags)
{
    auto const n = static_cast<std::uint32_t>(payload.size());
    out.push_back(static_cast<char>(flags));
    out.push_back(static_cast<char>((n >> 24) & 0xff));
    out.push_back(static_cast<char>((n >> 16) & 0xff));
    out.push_back(static_cast<char>((n >> 8) & 0xff));
    out.push_back(static_cast<char>(n & 0xff));
    out.append(payload);
}

std::string encode_envelope(std::string_view payload, std::uint8_t flags)
{
    std::string out;
    out.reserve(envelope_header_size + payload.size());
    append_envelope(out, payload, flags);
    return out;
}

result<void> envelope_decoder::feed(std::string_view bytes, std::vector<envelope>& out)
{
    if (failed_) return error(errc::protocol_error, "envelope stream already failed");
    auto fail = [this](std::string_view why) -> result<void> {
        failed_ = true;
        buffer_.clear();
        return error(errc::protocol_error, why);
    };
    if (ended_ && !bytes.empty()) return fail("data after the end-of-stream envelope");
    buffer_.append(bytes);
    std::size_t pos = 0;
    while (buffer_.size() - pos >= envelope_header_size) {
        if (ended_) return fail("data after the end-of-stream envelope");
        auto const* h = reinterpret_cast<unsigned char const*>(buffer_.data() + pos);
        std::uint8_t const flags = h[0];
        std::size_t const len =
            (std::size_t(h[1]) << 24) | (std::size_t(h[2]) << 16) | (std::size_t(h[3]) << 8) | std::size_t(h[4]);
        if (flags & envelope_flag_compressed) return fail("compressed envelope, but no compression was negotiated");
        if (flags & ~(envelope_flag_compressed | envelope_flag_end_stream))
            return fail("envelope with unknown flag bits");
        if (len > max_)
            return fail("envelope length " + std::to_string(len) + " exceeds the limit of " + std::to_string(max_));
        if (buffer_.size() - pos - envelope_header_size < len) break;
        envelope e;
        e.flags = flags;
        e.payload.assign(buffer_, pos + envelope_header_size, len);
        pos += envelope_header_size + len;
        if (e.end_stream()) ended_ = true;
        out.push_back(std::move(e));
    }
    buffer_.erase(0, pos);
    if (ended_ && !buffer_.empty()) return fail("data after the end-of-stream envelope");
    return {};
}

}  // namespace prism_e2b::wire
