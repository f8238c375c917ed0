// multipart/form-data parsing for POST /files.
#include "emulator/multipart.hpp"

#include "protocol/ascii_lower.hpp"

#include <algorithm>
#include <cctype>

namespace prism_e2b::local::detail {

namespace {

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

/// Value of `key` in a header like `form-data; name="file"; filename="x"`.
std::optional<std::string> header_param(std::string_view header, std::string_view key)
{
    std::size_t i = 0;
    while (i < header.size()) {
        auto semi = header.find(';', i);
        if (semi == std::string_view::npos) semi = header.size();
        auto item = trim(header.substr(i, semi - i));
        i = semi + 1;
        auto eq = item.find('=');
        if (eq == std::string_view::npos) continue;
        if (protocol::ascii_lower(trim(item.substr(0, eq))) != key) continue;
        auto v = trim(item.substr(eq + 1));
        if (v.size() >= 2 && v.front() == '"') {
            // Quoted: the value runs to the closing quote (which cannot be escaped in practice).
            auto const close = header.find('"', static_cast<std::size_t>(v.data() - header.data()) + 1);
            if (close == std::string_view::npos) return std::nullopt;
            auto const start = static_cast<std::size_t>(v.data() - header.data()) + 1;
            std::string out(header.substr(start, close - start));
            return out;
        }
        return std::string(v);
    }
    return std::nullopt;
}

std::string decode_filename(std::string s)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            auto code = s.substr(i + 1, 2);
            if (code == "22") {
                out.push_back('"');
                i += 2;
                continue;
            }
            if (code == "0D" || code == "0d") {
                out.push_back('\r');
                i += 2;
                continue;
            }
            if (code == "0A" || code == "0a") {
                out.push_back('\n');
                i += 2;
                continue;
            }
        }
        out.push_back(s[i]);
    }
    return out;
}

}  // namespace

std::optional<std::string> multipart_boundary(std::string_view content_type)
{
    auto const semi = content_type.find(';');
    if (protocol::ascii_lower(trim(content_type.substr(0, semi))) != "multipart/form-data" ||
        semi == std::string_view::npos)
        return std::nullopt;
    auto b = header_param(content_type.substr(semi + 1), "boundary");
    if (!b || b->empty() || b->size() > 200) return std::nullopt;
    return b;
}

std::optional<std::vector<multipart_part>> parse_multipart(std::string_view body, std::string_view boundary)
{
    std::string const delim = "--" + std::string(boundary);
    std::vector<multipart_part> parts;
    auto pos = body.find(delim);
    if (pos == std::string_view::npos) return std::nullopt;
    pos += delim.size();
    for (;;) {
        if (body.substr(pos, 2) == "--") return parts;  // closing delimiter
        if (body.substr(pos, 2) != "\r\n") return std::nullopt;
        pos += 2;
        auto const head_end = body.find("\r\n\r\n", pos);
        if (head_end == std::string_view::npos) return std::nullopt;
        auto headers = body.substr(pos, head_end - pos);
        auto const content_start = head_end + 4;
        auto const next = body.find("\r\n" + delim, content_start);
        if (next == std::string_view::npos) return std::nullopt;
        multipart_part part;
        part.content = body.substr(content_start, next - content_start);
        std::size_t i = 0;
        while (i <= headers.size()) {
            auto eol = headers.find("\r\n", i);
            if (eol == std::string_view::npos) eol = headers.size();
            auto line = headers.substr(i, eol - i);
            i = eol + 2;
            auto colon = line.find(':');
            if (colon == std::string_view::npos) continue;
            if (protocol::ascii_lower(trim(line.substr(0, colon))) == "content-disposition") {
                auto value = line.substr(colon + 1);
                if (auto n = header_param(value, "name")) part.name = *n;
                if (auto f = header_param(value, "filename")) part.filename = decode_filename(*f);
            }
        }
        parts.push_back(std::move(part));
        pos = next + 2 + delim.size();
    }
}

}  // namespace prism_e2b::local::detail
