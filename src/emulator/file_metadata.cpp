// File metadata in user.e2b.* xattrs (file_metadata.hpp).
#include "emulator/file_metadata.hpp"

#include <cerrno>
#include <string>
#include <sys/xattr.h>
#include <vector>

namespace prism_e2b::local::detail {

namespace {

constexpr std::string_view header_prefix = "x-metadata-";
constexpr std::string_view xattr_prefix = "user.e2b.";
constexpr std::size_t max_total = 4096;

bool token_char(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

/// The names of the xattrs of `path` (a /proc/self/fd link), empty on any error.
std::vector<std::string> xattr_names(std::string const& path)
{
    std::vector<std::string> names;
    for (int attempt = 0; attempt < 4; ++attempt) {
        ssize_t const size = ::listxattr(path.c_str(), nullptr, 0);
        if (size <= 0) return names;
        std::string buf(static_cast<std::size_t>(size), '\0');
        ssize_t const n = ::listxattr(path.c_str(), buf.data(), buf.size());
        if (n < 0 && errno == ERANGE) continue;  // one was added meanwhile
        if (n < 0) return names;
        for (std::size_t off = 0; off < static_cast<std::size_t>(n);) {
            std::string name(buf.c_str() + off);
            off += name.size() + 1;
            names.push_back(std::move(name));
        }
        return names;
    }
    return names;
}

std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace

std::variant<file_metadata, std::string> metadata_from_headers(header_list const& headers)
{
    file_metadata md;
    std::size_t total = 0;
    for (auto const& [name, value] : headers) {
        if (name.size() <= header_prefix.size() || name.compare(0, header_prefix.size(), header_prefix) != 0) continue;
        auto key = name.substr(header_prefix.size());
        for (char c : key)
            if (!token_char(c)) return "invalid metadata key '" + key + "'";
        for (char c : value)
            if (c < 0x20 || c > 0x7e) return "invalid metadata value for key '" + key + "': not printable US-ASCII";
        total += key.size() + value.size();
        if (total > max_total) return "metadata larger than 4096 bytes";
        md[std::move(key)] = value;
    }
    return md;
}

int write_file_metadata(int fd, file_metadata const& md)
{
    for (auto const& name : xattr_names(fd_path(fd)))
        if (name.rfind(xattr_prefix, 0) == 0 && !md.count(name.substr(xattr_prefix.size())))
            if (::fremovexattr(fd, name.c_str()) != 0 && errno != ENODATA) return errno;
    for (auto const& [key, value] : md) {
        std::string const name = std::string(xattr_prefix) + key;
        if (::fsetxattr(fd, name.c_str(), value.data(), value.size(), 0) != 0) return errno;
    }
    return 0;
}

file_metadata read_file_metadata(int fd)
{
    file_metadata md;
    auto const path = fd_path(fd);
    for (auto const& name : xattr_names(path)) {
        if (name.rfind(xattr_prefix, 0) != 0) continue;
        ssize_t const size = ::getxattr(path.c_str(), name.c_str(), nullptr, 0);
        if (size < 0) continue;
        std::string value(static_cast<std::size_t>(size), '\0');
        ssize_t const n = ::getxattr(path.c_str(), name.c_str(), value.data(), value.size());
        if (n < 0) continue;
        value.resize(static_cast<std::size_t>(n));
        md[name.substr(xattr_prefix.size())] = std::move(value);
    }
    return md;
}

}  // namespace prism_e2b::local::detail
