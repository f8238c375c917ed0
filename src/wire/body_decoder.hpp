// A response body collected under its cap, decoded as it arrives: identity or
// gzip (zlib). The cap bounds the decoded size and is checked on every piece,
// so an endless body or a gzip bomb fails at the cap; memory while reading is
// the cap plus one piece, never a doubling string.
#ifndef PRISM_E2B_WIRE_BODY_DECODER_HPP
#define PRISM_E2B_WIRE_BODY_DECODER_HPP

#include <prism_e2b/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::wire {

/// What a client offers in Accept-Encoding.
inline constexpr std::string_view accepted_encodings = "gzip";

class body_decoder {
public:
    /// For a response with this Content-Encoding (nullptr: none) and, when
    /// known, Content-Length. errc::protocol_error for an encoding that was not
    /// offered.
    static result<body_decoder> create(std::string const* content_encoding, std::size_t limit,
                                       std::optional<std::uint64_t> content_length);
    body_decoder(body_decoder&&) noexcept;
    body_decoder& operator=(body_decoder&&) noexcept;
    ~body_decoder();

    /// Raw (possibly compressed) bytes. errc::limit_exceeded once the decoded
    /// body passes the cap; errc::protocol_error for corrupt gzip data.
    result<void> feed(std::string_view raw);
    /// The decoded body. errc::protocol_error when the gzip stream is truncated.
    result<std::string> finish();
    /// Whether the body was encoded (the caller drops Content-Encoding then).
    bool decodes() const noexcept { return static_cast<bool>(z_); }

private:
    struct zstream;
    body_decoder(std::size_t limit, std::size_t piece_capacity);
    result<void> put(char const* p, std::size_t n);

    std::size_t limit_;
    std::size_t piece_capacity_;
    std::size_t total_ = 0;
    std::vector<std::string> pieces_;  // filled to piece_capacity_ each; joined in finish()
    std::unique_ptr<zstream> z_;
    bool z_done_ = false;
    bool raw_seen_ = false;
};

}  // namespace prism_e2b::wire

#endif
