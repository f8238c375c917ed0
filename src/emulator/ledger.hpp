// The durable ledger of prism-e2b-local: one JSON file per sandbox in
// state_dir/ledger (mode 0700, files 0600, owned by the server's user, outside
// every sandbox's root), replaced atomically (write, fsync, rename, fsync dir)
// on every change of what a restart needs: identity, template, metadata, env
// vars and access token (secrets: no sandbox can read the directory), state,
// deadline, lifecycle, uid range, the template's limits, default user and start
// command, and (namespaces engine) the init's pid and the cgroups, so a restarted
// server adopts a sandbox that outlived it. Why files and not SQLite: a record is
// written whole and read back only at start, one file per sandbox needs no
// schema, no library and no locking beyond the state dir's flock.
#ifndef PRISM_E2B_EMULATOR_LEDGER_HPP
#define PRISM_E2B_EMULATOR_LEDGER_HPP

#include <boost/json/object.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace prism_e2b::local::detail {

struct sandbox;

/// state_dir/ledger, created 0700 if missing.
std::filesystem::path ledger_dir(std::filesystem::path const& state_dir);

/// Writes sb's record (takes sb.mutex for the mutable part). Returns false on an I/O error.
bool ledger_write(std::filesystem::path const& dir, sandbox const& sb);

/// Removes sb's record.
void ledger_remove(std::filesystem::path const& dir, std::string const& id);

/// Every record (unreadable or malformed files are skipped).
std::vector<boost::json::object> ledger_read_all(std::filesystem::path const& dir);

}  // namespace prism_e2b::local::detail

#endif
