// The JSON records prism-e2b-local keeps in its state dir (the sandbox ledger,
// volumes, snapshots): read whole, fields taken leniently (a missing or mistyped
// field is its empty value: the caller validates what it needs), written whole
// and synced.
#ifndef PRISM_E2B_EMULATOR_STATE_RECORDS_HPP
#define PRISM_E2B_EMULATOR_STATE_RECORDS_HPP

#include <boost/json/object.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace prism_e2b::local::detail {

/// The file's JSON object; nullopt when it is missing, unreadable or not an object.
std::optional<boost::json::object> read_record(std::filesystem::path const& file);

/// Writes `text` to `file` (created with `mode`, or truncated) and fsyncs it. False on any error.
bool write_record(std::filesystem::path const& file, std::string_view text, mode_t mode);

/// The string at `key`; empty when absent or not a string.
std::string field_string(boost::json::object const& o, std::string_view key);
/// The number at `key` as an integer; 0 when absent or not a number.
std::int64_t field_int(boost::json::object const& o, std::string_view key);
/// The boolean at `key`; false when absent or not a boolean.
bool field_bool(boost::json::object const& o, std::string_view key);
/// The object of strings at `key` (other members skipped); empty when absent.
std::map<std::string, std::string> field_string_map(boost::json::object const& o, std::string_view key);

}  // namespace prism_e2b::local::detail

#endif
