// Volumes (openapi.yml's /volumes API and the volume-content API the SDK's
// Volume speaks): plain data. A volume is a directory of files that outlives the
// sandboxes mounting it (create_sandbox_params::volume_mounts); its content API
// answers to the volume's own token, not to the API key.
#ifndef PRISM_E2B_E2B_VOLUMES_HPP
#define PRISM_E2B_E2B_VOLUMES_HPP

#include <cstdint>
#include <optional>
#include <string>

namespace prism_e2b::e2b {

/// Volume / VolumeAndToken.
struct volume_info {
    std::string volume_id;  ///< the volume id
    std::string name;       ///< its name, unique per team
    /// The content API's token (a secret, registered with the redactor); empty in a list,
    /// which does not carry it.
    std::string token;
};

/// What the content calls need: the volume and its token (async_get_volume gives both).
struct volume_ref {
    std::string volume_id;  ///< the volume id
    std::string token;      ///< its content token; secret
};

/// What a volume entry is.
enum class volume_entry_type { unknown, file, directory, symlink };

/// VolumeEntryStat: one file, directory or symlink of a volume.
struct volume_entry {
    std::string name;                                     ///< the last component of its path
    std::string path;                                     ///< the volume's path ("/" is its root)
    volume_entry_type type = volume_entry_type::unknown;  ///< file, directory, symlink
    std::int64_t size = 0;                                ///< bytes
    std::uint32_t mode = 0;                               ///< permission bits
    std::uint32_t uid = 0;                                ///< owner as a sandbox sees it (1000: "user")
    std::uint32_t gid = 0;                                ///< group as a sandbox sees it
    std::string atime;                                    ///< last access, RFC 3339 as sent
    std::string mtime;                                    ///< last modification, RFC 3339 as sent
    std::string ctime;                                    ///< last status change, RFC 3339 as sent
    std::optional<std::string> target;                    ///< a symlink's target
};

/// Owner and mode to set (unset: left as is, or the server's default for a new entry).
struct volume_metadata {
    std::optional<std::uint32_t> uid;   ///< owner, as a sandbox sees it
    std::optional<std::uint32_t> gid;   ///< group, as a sandbox sees it
    std::optional<std::uint32_t> mode;  ///< permission bits
};

/// make_dir / write_file options.
struct volume_write_options {
    volume_metadata metadata;  ///< owner and mode of what is made
    /// make_dir: create missing parents and accept an existing directory. write_file: E2B's
    /// "force overwrite" flag (prism-e2b-local overwrites either way).
    bool force = false;
};

}  // namespace prism_e2b::e2b

#endif
