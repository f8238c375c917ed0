// Persistent volumes (openapi.yml's /volumes API): a directory of files that
// outlives the sandboxes mounting it and survives a restart, kept in
// state_dir/volumes/<id>/{volume.json,data/} (0700; volume.json 0600 holds the
// volume's content token, a secret). The files in data/ carry the ids they have
// inside a sandbox (1000 is "user"): the namespaces engine mounts data/ through an
// idmapped mount onto the sandbox's id range, gVisor binds it as it is.
#ifndef PRISM_E2B_EMULATOR_VOLUMES_HPP
#define PRISM_E2B_EMULATOR_VOLUMES_HPP

#include <prism_e2b/error.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::local::detail {

struct volume_record {
    std::string id;
    std::string name;   ///< unique among the server's volumes
    std::string token;  ///< Bearer token of the volume-content API (a secret)
    std::int64_t created_ms = 0;
    std::uint64_t seq = 0;  ///< creation order (list order)
};

/// A volume mounted into a sandbox (NewSandbox's volumeMounts, kept in the ledger).
struct volume_mount {
    std::string name;       ///< the volume's name, as the create named it
    std::string volume_id;  ///< the volume it named then
    std::string path;       ///< absolute, normalised path inside the sandbox
};

/// Thread safety: every member may be called from any thread (one mutex).
class volume_store {
public:
    /// Loads dir's volumes (creating dir 0700), registers their tokens with the redactor and
    /// removes half-made ones.
    void open(std::filesystem::path dir);
    /// A new, empty volume. Errors: invalid_argument (the name), conflict (a volume has the name).
    result<volume_record> create(std::string const& name);
    std::optional<volume_record> find(std::string_view id) const;
    std::optional<volume_record> find_by_name(std::string_view name) const;
    /// Every volume, in creation order.
    std::vector<volume_record> list() const;
    /// Removes it and its files; false when there is no such volume.
    bool remove(std::string_view id);
    /// Where a volume's files are (data/ of its directory).
    std::filesystem::path data_dir(std::string_view id) const;

private:
    std::filesystem::path dir_;
    mutable std::mutex mutex_;
    std::map<std::string, volume_record, std::less<>> by_id_;
    std::uint64_t next_seq_ = 0;
};

/// Is `name` one a volume may be given ([A-Za-z0-9_-]{1,64}, as E2B's SDK checks)?
bool valid_volume_name(std::string_view name);

/// Where a sandbox may mount a volume: an absolute, normalised path of at most 255 bytes
/// that is not "/" and not in the system directories, /proc, /dev or /sys. nullopt: fine;
/// otherwise why not.
std::optional<std::string> volume_mount_path_problem(std::string_view path);

/// Owners of what the content API creates without uid/gid: the sandbox's "user".
inline constexpr std::uint32_t volume_default_id = 1000;

}  // namespace prism_e2b::local::detail

#endif
