// A sandbox's logs (openapi.yml: GET /v2/sandboxes/{id}/logs): plain data.
#ifndef PRISM_E2B_E2B_SANDBOX_LOGS_HPP
#define PRISM_E2B_E2B_SANDBOX_LOGS_HPP

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace prism_e2b::e2b {

/// SandboxLogEntry.
struct sandbox_log_entry {
    std::string timestamp;                      ///< RFC 3339 as sent
    std::string level;                          ///< "debug", "info", "warn" or "error"
    std::string message;                        ///< the line
    std::map<std::string, std::string> fields;  ///< structured fields
};

/// The query of GET /v2/sandboxes/{id}/logs.
struct logs_params {
    std::optional<std::int64_t> cursor;  ///< from this time, Unix milliseconds
    std::optional<std::uint32_t> limit;  ///< at most this many (the server caps at 1000)
    bool backward = false;               ///< direction: newest first
    std::optional<std::string> level;    ///< minimum level
    std::optional<std::string> search;   ///< case-sensitive substring of the message
};

}  // namespace prism_e2b::e2b

#endif
