// The template registry of prism-e2b-local: what `templateID` in a create names.
//
// `base` always exists (the server's limits, user "user", no files). Every other
// template is a JSON file state_dir/templates/<id>.json, read at each create (an
// edit applies to the next sandbox, no restart):
//
//   {"rootfs": "/srv/tpl/py",        a directory, or a .tar / .tar.gz / .tgz tarball, whose
//                                     home/user, workspace, tmp and root seed the sandbox's own
//                                     writable directories (system directories stay the host's)
//    "cpuCount": 1, "memoryMB": 512,  cgroup limits (namespaces engine) and the info's figures
//    "diskSizeMB": 2048,              the sandbox's disk quota (sandbox_disk.hpp), the info's diskSizeMB
//                                     and metrics' diskTotal
//    "user": "user",                  the default user of commands and files ("user" or "root")
//    "envVars": {"K": "V"},           every command's environment (the create's envVars win)
//    "startCmd": "..."}               run (bash -lc) by the default user on every cold boot
//
// Every field is optional; a `base.json` overrides `base`. An id is [A-Za-z0-9_.-]{1,64}
// (not starting with '.'), optionally tagged ":default" (E2B's only tag); anything else,
// or an id without a file, is unknown: the create answers 404 as E2B does.
#ifndef PRISM_E2B_EMULATOR_TEMPLATES_HPP
#define PRISM_E2B_EMULATOR_TEMPLATES_HPP

#include <prism_e2b/error.hpp>

#include "emulator/engines/namespaces/sandbox_init.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace prism_e2b::local::detail {

/// What a sandbox starts from.
struct template_spec {
    std::string id;                ///< as the info reports it (templateID)
    std::filesystem::path rootfs;  ///< empty: no files; a directory or a tarball
    bool rootfs_is_tarball = false;
    bool from_snapshot = false;  ///< rootfs is a snapshot's copy (owners are ids inside a sandbox)
    /// A snapshot with a gVisor memory image: its directory (memory/, boot_id); empty: files only.
    std::filesystem::path memory_snapshot;
    cgroup_limits limits;       ///< cpu, memory, pids
    std::uint32_t disk_mb = 0;  ///< 0: the state dir's filesystem size
    std::string user = "user";  ///< default user: "user" or "root"
    std::map<std::string, std::string> env_vars;
    std::string start_cmd;  ///< empty: none
};

/// `<id>` or `<id>:default` -> `<id>`; empty when the id is not one a template file may have.
std::string template_file_id(std::string_view id);

/// The template `id`: `base` (from `base_limits`, unless templates_dir/base.json exists) or
/// templates_dir/<id>.json. Errors: not_found (no such template), invalid_argument (its
/// file is malformed; the message says what is wrong).
result<template_spec> find_template(std::filesystem::path const& templates_dir, std::string_view id,
                                    cgroup_limits const& base_limits);

/// Parses one template file's JSON text (exposed for tests). `id` is what the info reports.
result<template_spec> parse_template(std::string const& id, std::string const& json_text,
                                     cgroup_limits const& base_limits);

/// The template file's JSON text for `t` (what parse_template reads back), without its rootfs.
std::string template_json(template_spec const& t);

}  // namespace prism_e2b::local::detail

#endif
