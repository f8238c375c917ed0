// Where a request goes: scheme, host, port and base path of a server, parsed
// from the user's http(s) URL. The origin key names a connection pool.
#ifndef PRISM_E2B_WIRE_ORIGIN_HPP
#define PRISM_E2B_WIRE_ORIGIN_HPP

#include <prism_e2b/error.hpp>

#include <string>
#include <string_view>

namespace prism_e2b::wire {

/// scheme://host[:port][/base-path] of a server.
struct origin {
    bool tls = true;
    std::string host;       ///< without brackets for IPv6
    std::string port;       ///< always set ("443", "80" or explicit)
    std::string base_path;  ///< prefix of every target, without a trailing '/'

    /// "https://host:port": the pool key (base_path excluded).
    std::string key() const;
    /// Host header value (port omitted when it is the scheme's default).
    std::string host_header() const;
};

/// Parses an http:// or https:// URL. errc::invalid_argument otherwise.
result<origin> parse_origin(std::string_view url);

/// `target` without its query (for log lines and error messages: a query may
/// carry user paths, never secrets, but it is noise).
std::string path_of(std::string const& target);

}  // namespace prism_e2b::wire

#endif
