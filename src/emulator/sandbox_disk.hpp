// A sandbox's disk quota: its writable directories (/home/user, /workspace, /tmp,
// /root) live on an ext4 file system of the template's diskSizeMB, a sparse image
// file in the sandbox's state dir, attached to a loop device and mounted on the
// sandbox root (dir/root) in the server's mount namespace before the sandbox's own
// namespace is assembled. Writing past it is ENOSPC inside that sandbox only; the
// host's file system holds just the blocks written. The image is formatted once per
// size (state_dir/disk-images/<mb>.ext4) and each sandbox gets a sparse copy.
#ifndef PRISM_E2B_EMULATOR_SANDBOX_DISK_HPP
#define PRISM_E2B_EMULATOR_SANDBOX_DISK_HPP

#include <prism_e2b/error.hpp>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>

namespace prism_e2b::local::detail {

/// Why this machine cannot give sandboxes a disk quota (not root, no loop devices,
/// no mkfs.ext4); empty when it can.
std::string sandbox_disk_unavailable();

/// The formatted images of one state dir, one per size, made on first use.
class disk_image_cache {
public:
    explicit disk_image_cache(std::filesystem::path dir) : dir_(std::move(dir)) {}
    /// The pristine image of `mb` MiB (made with mkfs.ext4 the first time).
    /// Errors: server_error naming what failed.
    result<std::filesystem::path> image(std::uint32_t mb);

private:
    std::filesystem::path dir_;
    std::mutex mutex_;
};

/// Copies the pristine image to `image` (sparse: only its written blocks) and mounts it on
/// `mount_point` (created if missing). Errors: server_error naming the step that failed.
result<void> create_sandbox_disk(disk_image_cache& cache, std::uint32_t mb, std::filesystem::path const& image,
                                 std::filesystem::path const& mount_point);

/// Mounts `image` on `mount_point` unless something is mounted there already (a sandbox
/// taken back after a restart: the mount outlives a server that was killed).
result<void> mount_sandbox_disk(std::filesystem::path const& image, std::filesystem::path const& mount_point);

/// Is a file system other than its parent's mounted on `path`?
bool is_mount_point(std::filesystem::path const& path);

/// Detaches the mount on `mount_point` (lazily: a dying sandbox's mount namespace may still
/// hold it; the loop device, set to auto-clear, goes with the last reference).
void unmount_sandbox_disk(std::filesystem::path const& mount_point);

/// The loop devices whose backing file is `image` (for tests and leak checks).
std::vector<std::string> loop_devices_of(std::filesystem::path const& image);

}  // namespace prism_e2b::local::detail

#endif
