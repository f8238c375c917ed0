// A writable system per sandbox, as in an E2B VM: the host's system directories
// (/usr, /etc, /opt, ...) are the read-only lower layer of an overlay whose upper
// layer is the sandbox's own (root/.system/<dir>/{upper,work} in its state dir, on
// its disk image, so the disk quota counts it and snapshots, forks and restarts
// keep it). The lower layer is an idmapped mount onto the sandbox's range, so what
// the host's root owns the sandbox's root owns: `sudo apt-get install` works inside
// and changes nothing on the host or in another sandbox.
//
// What the host keeps from "other" (/etc/shadow, /etc/ssl/private, ...) the
// sandbox's root would read through the idmap, so it is left out: /etc's lower
// layer is not the live /etc but a copy without it (state_dir/system-etc/<hash>,
// made again when /etc changed, so a secret made on the host after a sandbox
// booted never reaches it); under /usr and /opt, which are too large to copy, a
// whiteout in the upper layer hides it, made at every boot where the upper layer
// holds nothing of its own there (/opt walked at every boot, /usr once per server
// process: a file under /usr narrowed after that stays readable to a sandbox's root). The sandbox's own /etc/passwd,
// /etc/group, /etc/shadow (no passwords) and /etc/sudoers (user may sudo without a password, as in E2B's base template)
// are written there once; /etc/hosts names the sandbox's hostname at every boot.
#ifndef PRISM_E2B_EMULATOR_SYSTEM_LAYER_HPP
#define PRISM_E2B_EMULATOR_SYSTEM_LAYER_HPP

#include <prism_e2b/error.hpp>

#include <array>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace prism_e2b::local::detail {

/// Host system directories every sandbox sees (a symlink among them stays a symlink).
inline constexpr std::array<char const*, 9> system_dirs = {"usr",   "bin",    "sbin", "lib", "lib32",
                                                           "lib64", "libx32", "etc",  "opt"};

/// The name of the layer's directory in a sandbox's root (never mounted into the sandbox).
inline constexpr char system_layer_name[] = ".system";

/// The system directories that are real directories on this host (the overlays to make).
std::vector<std::string> system_layer_dirs();

/// Paths under the live system directories (relative to "/", /etc excepted: it is copied)
/// that the host's "other" cannot read: a file without o+r, a directory without o+rx (not
/// descended). /opt is walked on every call, /usr (180,000 entries here) once per process.
std::vector<std::string> host_hidden_paths();

/// A copy of the host's /etc without what "other" cannot read, under `store`, named by a
/// digest of what it copies (made when that changed; about 1,400 entries, 4 MiB here).
/// Owners and modes as on the host. Errors: server_error naming the path.
result<std::filesystem::path> etc_snapshot(std::filesystem::path const& store);

/// What the layer's first boot writes into the sandbox's /etc.
struct system_layer_seed {
    std::string passwd_file, group_file;  ///< host files copied as /etc/passwd, /etc/group (if set)
    std::string hostname;                 ///< the sandbox's, made resolvable in /etc/hosts (sudo asks)
};

/// Makes `layer`/<dir>/{upper,work} for each system directory (owned by the sandbox's root,
/// `base`), writes the seed's files on the first boot and a whiteout for every hidden host
/// path the upper layer holds nothing at. Errors: server_error naming the path.
result<void> prepare_system_layer(std::filesystem::path const& layer, uid_t base, system_layer_seed const& seed);

/// The gvisor engine's overlays, mounted by the server on the host at `at`/<dir> (runsc binds
/// each read-write into its container): lower the host's /<dir> (/etc: `etc`, the copy without
/// secrets), upper and work the layer's (userxattr, as the namespaces engine's overlays, so a
/// copy of the layer reads alike for both). What is still mounted there (a server that died) is
/// unmounted first. The directories mounted, in system_layer_dirs() order.
/// Errors: server_error naming the directory (nothing left mounted).
result<std::vector<std::string>> mount_system_overlays(std::filesystem::path const& layer,
                                                       std::filesystem::path const& etc,
                                                       std::filesystem::path const& at);

/// Unmounts what mount_system_overlays mounted at `at` (lazily: a gofer may still hold it).
void unmount_system_overlays(std::filesystem::path const& at);

}  // namespace prism_e2b::local::detail

#endif
