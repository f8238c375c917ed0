// gzip bodies with zlib (gzip_body.hpp).
#include "emulator/gzip_body.hpp"

#include "emulator/rest_replies.hpp"

#include <cctype>
#include <cstdlib>
#include <zlib.h>

namespace prism_e2b::local::detail {

std::optional<std::string> gunzip(std::string_view in, std::size_t max_bytes, gunzip_error& why)
{
    z_stream zs{};
    if (::inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        why = gunzip_error::corrupt;
        return std::nullopt;
    }
    std::string out;
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = static_cast<uInt>(in.size());
    char buf[64 * 1024];
    int rc = Z_OK;
    for (;;) {
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof buf;
        rc = ::inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) break;
        std::size_t const got = sizeof buf - zs.avail_out;
        if (out.size() + got > max_bytes) {
            ::inflateEnd(&zs);
            why = gunzip_error::too_large;
            return std::nullopt;
        }
        out.append(buf, got);
        if (rc == Z_STREAM_END) {
            if (zs.avail_in == 0) break;
            ::inflateReset(&zs);  // another member follows
        } else if (zs.avail_in == 0 && got == 0) {
            rc = Z_BUF_ERROR;  // truncated
            break;
        }
    }
    ::inflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        why = gunzip_error::corrupt;
        return std::nullopt;
    }
    return out;
}

std::string gzip(std::string_view in)
{
    z_stream zs{};
    ::deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    std::string out(::deflateBound(&zs, static_cast<uLong>(in.size())) + 32, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = static_cast<uInt>(in.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    ::deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    ::deflateEnd(&zs);
    return out;
}

bool accepts_gzip(std::string_view header)
{
    std::size_t i = 0;
    while (i < header.size()) {
        auto j = header.find(',', i);
        if (j == std::string_view::npos) j = header.size();
        auto item = header.substr(i, j - i);
        i = j + 1;
        while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
        auto const semi = item.find(';');
        auto coding = item.substr(0, semi);
        while (!coding.empty() && std::isspace(static_cast<unsigned char>(coding.back()))) coding.remove_suffix(1);
        if (coding != "gzip" && coding != "x-gzip" && coding != "*") continue;
        if (semi != std::string_view::npos) {
            auto const q = item.find("q=", semi);
            if (q != std::string_view::npos && std::strtod(std::string(item.substr(q + 2)).c_str(), nullptr) <= 0)
                return false;
        }
        return true;
    }
    return false;
}

std::optional<http_response> inflate_upload(http_request& req, std::size_t max_bytes)
{
    auto const enc = req.header("content-encoding");
    if (enc.empty() || enc == "identity") return std::nullopt;
    if (enc != "gzip" && enc != "x-gzip")
        return rest_error(415, "Content-Encoding '" + std::string(enc) + "' is not supported; use gzip or identity");
    gunzip_error why{};
    auto body = gunzip(req.body, max_bytes, why);
    if (!body)
        return why == gunzip_error::too_large
                   ? rest_error(413, "the inflated upload is larger than " + std::to_string(max_bytes) + " bytes")
                   : rest_error(400, "the gzip body is corrupt or truncated");
    req.body = std::move(*body);
    std::erase_if(req.headers, [](auto const& h) { return h.first == "content-encoding"; });
    return std::nullopt;
}

void gzip_response_for(http_request const& req, http_response& res)
{
    res.headers.emplace_back("Vary", "Accept-Encoding");
    if (!accepts_gzip(req.header("accept-encoding"))) return;
    res.body = gzip(res.body);
    res.headers.emplace_back("Content-Encoding", "gzip");
}

}  // namespace prism_e2b::local::detail
