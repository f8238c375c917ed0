// Persistent sandbox snapshots (openapi.yml's snapshot API): a copy of a
// sandbox's files plus the settings it was created with, kept in
// state_dir/snapshots/<key>/{snapshot.json,root/} (0700, owners translated to the
// ids inside a sandbox), so they outlive the sandbox and survive a restart. A
// snapshot is a template: a create whose templateID names it starts from its files.
// On the gvisor engine it holds the memory too (memory/: runsc's checkpoint image,
// boot_id), and a sandbox created from it is restored from that image: the
// snapshot's processes go on in it. The other engines keep files only.
#ifndef PRISM_E2B_EMULATOR_SNAPSHOTS_HPP
#define PRISM_E2B_EMULATOR_SNAPSHOTS_HPP

#include <prism_e2b/error.hpp>

#include "emulator/templates.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::local::detail {

struct snapshot_record {
    std::string key;         ///< random, the directory's name
    std::string name;        ///< given at creation; empty: none
    std::string sandbox_id;  ///< the sandbox it was taken from
    bool memory = false;     ///< it holds a gVisor memory image (dir/memory, dir/boot_id)
    template_spec spec;      ///< the source's settings; spec.rootfs is the copy (filled by the store)
    std::int64_t created_ms = 0;
    std::uint64_t seq = 0;  ///< creation order (list order, paging token)

    /// What the API calls it: "<name or key>:default" (E2B's tag-qualified template id).
    std::string snapshot_id() const { return (name.empty() ? key : name) + ":default"; }
};

/// Thread safety: every member may be called from any thread (one mutex; the copy
/// into a new snapshot runs outside it).
class snapshot_store {
public:
    /// Loads dir's snapshots (creating dir 0700) and removes half-made ones.
    void open(std::filesystem::path dir);

    /// Makes a snapshot: `fill` puts the files into dir/root of the directory it is given, a
    /// memory image into dir/memory and dir/boot_id, and says whether it did the latter; on
    /// success the record is written and the snapshot appears at once (a rename). A snapshot with
    /// the same name is replaced (E2B: a new build of the same template).
    result<snapshot_record> add(snapshot_record rec,
                                std::function<result<bool>(std::filesystem::path const& dir)> const& fill);
    /// By snapshot id, name or key, with or without ":default".
    std::optional<snapshot_record> find(std::string_view id) const;
    /// Every snapshot, in creation order.
    std::vector<snapshot_record> list() const;
    /// Removes it and its files; false when there is no such snapshot.
    bool remove(std::string_view id);

private:
    std::optional<snapshot_record> find_locked(std::string_view id) const;

    std::filesystem::path dir_;
    mutable std::mutex mutex_;
    std::map<std::string, snapshot_record> by_key_;
    std::uint64_t next_seq_ = 0;
};

/// Is `name` one a snapshot may be given ([A-Za-z0-9_.-]{1,64}, not starting with '.', not "base")?
bool valid_snapshot_name(std::string_view name);

}  // namespace prism_e2b::local::detail

#endif
