#include "wire/body_decoder.hpp"

#include <algorithm>
#include <cctype>
#include <zlib.h>

namespace prism_e2b::wire {

namespace {

constexpr std::size_t default_piece = 64u << 10;

std::string trimmed_lower(std::string const& s)
{
    auto b = s.find_first_not_of(" \t");
    auto e = s.find_last_not_of(" \t");
    std::string out = b == std::string::npos ? std::string{} : s.substr(b, e - b + 1);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

struct body_decoder::zstream {
    z_stream z{};
    zstream() = default;
    zstream(zstream const&) = delete;
    zstream& operator=(zstream const&) = delete;
    ~zstream() { inflateEnd(&z); }
};

body_decoder::body_decoder(std::size_t limit, std::size_t piece_capacity)
    : limit_(limit), piece_capacity_(std::max<std::size_t>(1, piece_capacity))
{
}
body_decoder::body_decoder(body_decoder&&) noexcept = default;
body_decoder& body_decoder::operator=(body_decoder&&) noexcept = default;
body_decoder::~body_decoder() = default;

result<body_decoder> body_decoder::create(std::string const* content_encoding, std::size_t limit,
                                          std::optional<std::uint64_t> content_length)
{
    auto const enc = content_encoding ? trimmed_lower(*content_encoding) : std::string{};
    if (enc.empty() || enc == "identity") {
        // A known length (the parser already refused one over the cap) is one
        // exact allocation.
        auto const piece = content_length ? static_cast<std::size_t>(*content_length) : default_piece;
        return body_decoder(limit, std::min(piece, std::max<std::size_t>(limit, 1)));
    }
    if (enc != "gzip" && enc != "x-gzip")
        return error(errc::protocol_error, "the server sent content encoding '" + enc + "', which was not offered");
    body_decoder d(limit, default_piece);
    d.z_ = std::make_unique<zstream>();
    // 16 + MAX_WBITS: a gzip wrapper, not zlib or raw deflate.
    if (inflateInit2(&d.z_->z, 16 + MAX_WBITS) != Z_OK)
        return error(std::make_error_code(std::errc::not_enough_memory), "cannot initialise zlib");
    return d;
}

result<void> body_decoder::put(char const* p, std::size_t n)
{
    if (n > limit_ - total_)
        return error(errc::limit_exceeded, "response body over its cap of " + std::to_string(limit_) + " bytes");
    total_ += n;
    while (n > 0) {
        if (pieces_.empty() || pieces_.back().size() == piece_capacity_) {
            pieces_.emplace_back();
            pieces_.back().reserve(piece_capacity_);
        }
        auto& last = pieces_.back();
        auto const take = std::min(n, piece_capacity_ - last.size());
        last.append(p, take);
        p += take;
        n -= take;
    }
    return result<void>{};
}

result<void> body_decoder::feed(std::string_view raw)
{
    if (!z_) return put(raw.data(), raw.size());
    if (raw.empty()) return result<void>{};
    raw_seen_ = true;
    auto& z = z_->z;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
    z.avail_in = static_cast<uInt>(raw.size());
    char out[16384];
    for (;;) {
        if (z_done_) {
            if (z.avail_in == 0) break;
            // Concatenated gzip members are one body (RFC 1952, section 2.2).
            if (inflateReset(&z) != Z_OK) return error(errc::protocol_error, "corrupt gzip body");
            z_done_ = false;
        }
        z.next_out = reinterpret_cast<Bytef*>(out);
        z.avail_out = sizeof out;
        int const rc = inflate(&z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            return error(errc::protocol_error, std::string("corrupt gzip body: ") + (z.msg ? z.msg : "inflate failed"));
        if (auto r = put(out, sizeof out - z.avail_out); !r) return r;
        if (rc == Z_STREAM_END) {
            z_done_ = true;
            continue;
        }
        if (z.avail_out != 0) break;  // all input consumed, all output flushed
    }
    return result<void>{};
}

result<std::string> body_decoder::finish()
{
    if (z_ && raw_seen_ && !z_done_) return error(errc::protocol_error, "the gzip body ended before its trailer");
    if (pieces_.empty()) return std::string{};
    if (pieces_.size() == 1) return std::move(pieces_.front());
    std::string out;
    out.reserve(total_);
    for (auto& p : pieces_) {
        out += p;
        std::string{}.swap(p);  // give each piece back as soon as it is copied
    }
    pieces_.clear();
    return out;
}

}  // namespace prism_e2b::wire
