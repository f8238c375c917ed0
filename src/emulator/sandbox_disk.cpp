// Per-sandbox disk quota on a loop-mounted ext4 image (sandbox_disk.hpp).
#include "emulator/sandbox_disk.hpp"

#include "emulator/host_tool.hpp"
#include "emulator/sandbox_fs.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;

namespace {

error disk_error(std::string what, int err = 0)
{
    if (err) what += std::string(": ") + std::strerror(err);
    return error(errc::server_error, "sandbox disk: " + what, {"create"});
}

/// Copies the data extents of `from` into a new `to` of the same size, leaving the holes holes.
result<void> sparse_copy(fs::path const& from, fs::path const& to)
{
    unique_fd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
    if (!in) return disk_error("cannot open " + from.string(), errno);
    unique_fd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!out) return disk_error("cannot create " + to.string(), errno);
    struct stat st {};
    if (::fstat(in.get(), &st) != 0 || ::ftruncate(out.get(), st.st_size) != 0)
        return disk_error("cannot size " + to.string(), errno);
    off_t pos = 0;
    while (pos < st.st_size) {
        off_t const data = ::lseek(in.get(), pos, SEEK_DATA);
        if (data < 0) break;  // ENXIO: only a hole is left
        off_t const hole = ::lseek(in.get(), data, SEEK_HOLE);
        if (hole < 0) return disk_error("cannot read " + from.string(), errno);
        off_t src = data, dst = data;
        while (src < hole) {
            ssize_t const n =
                ::copy_file_range(in.get(), &src, out.get(), &dst, static_cast<std::size_t>(hole - src), 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return disk_error("cannot copy " + from.string(), n < 0 ? errno : EIO);
        }
        pos = hole;
    }
    // No fsync: the loop device reads the copy through the page cache, and what the sandbox writes
    // later is not synced either (a host crash loses a sandbox's recent writes, not its image's shape).
    return result<void>{};
}

/// Attaches `image` to a free loop device (auto-clearing: it detaches when its last user,
/// the mount, goes). Returns the open device.
result<unique_fd> attach_loop(fs::path const& image)
{
    unique_fd backing(::open(image.c_str(), O_RDWR | O_CLOEXEC));
    if (!backing) return disk_error("cannot open " + image.string(), errno);
    unique_fd control(::open("/dev/loop-control", O_RDWR | O_CLOEXEC));
    if (!control) return disk_error("cannot open /dev/loop-control", errno);
    for (int attempt = 0; attempt < 16; ++attempt) {  // another process may take the free one first
        int const n = ::ioctl(control.get(), LOOP_CTL_GET_FREE);
        if (n < 0) return disk_error("no free loop device", errno);
        std::string const dev = "/dev/loop" + std::to_string(n);
        unique_fd loop(::open(dev.c_str(), O_RDWR | O_CLOEXEC));
        if (!loop) return disk_error("cannot open " + dev, errno);
        loop_config cfg{};
        cfg.fd = static_cast<std::uint32_t>(backing.get());
        cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
        std::strncpy(reinterpret_cast<char*>(cfg.info.lo_file_name), image.c_str(), LO_NAME_SIZE - 1);
        if (::ioctl(loop.get(), LOOP_CONFIGURE, &cfg) == 0) return loop;
        if (errno != EBUSY) return disk_error("cannot attach " + dev, errno);
    }
    return disk_error("every free loop device was taken first");
}

}  // namespace

std::string sandbox_disk_unavailable()
{
    if (::geteuid() != 0) return "the server is not root (a loop mount needs it)";
    if (::access("/dev/loop-control", R_OK | W_OK) != 0) return "no /dev/loop-control";
    if (find_host_tool("mkfs.ext4").empty()) return "no mkfs.ext4 (e2fsprogs)";
    return {};
}

result<fs::path> disk_image_cache::image(std::uint32_t mb)
{
    std::lock_guard lk(mutex_);
    auto const path = dir_ / (std::to_string(mb) + ".ext4");
    if (::access(path.c_str(), R_OK) == 0) return path;
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return disk_error("cannot create " + dir_.string() + ": " + ec.message());
    auto const partial = dir_ / (std::to_string(mb) + ".ext4.partial");
    ::unlink(partial.c_str());
    {
        unique_fd f(::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
        if (!f || ::ftruncate(f.get(), static_cast<off_t>(mb) << 20) != 0)
            return disk_error("cannot create " + partial.string(), errno);
    }
    // No reserved blocks (all of it is the sandbox's); inode tables and journal left to be
    // initialised lazily, so the image stays sparse (mounted with noinit_itable).
    auto made = run_host_tool({"mkfs.ext4", "-q", "-F", "-m", "0", "-E",
                               "lazy_itable_init=1,lazy_journal_init=1,root_owner=0:0", partial.string()},
                              "mkfs.ext4");
    if (!made) {
        ::unlink(partial.c_str());
        return made.error();
    }
    if (::rename(partial.c_str(), path.c_str()) != 0) return disk_error("cannot keep " + path.string(), errno);
    return path;
}

bool is_mount_point(fs::path const& path)
{
    struct stat self {
    }, parent{};
    if (::stat(path.c_str(), &self) != 0) return false;
    if (::stat(path.parent_path().c_str(), &parent) != 0) return false;
    return self.st_dev != parent.st_dev;
}

result<void> mount_sandbox_disk(fs::path const& image, fs::path const& mount_point)
{
    std::error_code ec;
    fs::create_directories(mount_point, ec);
    if (is_mount_point(mount_point)) return result<void>{};
    auto loop = attach_loop(image);
    if (!loop) return loop.error();
    std::string const dev = "/proc/self/fd/" + std::to_string(loop->get());
    char path[64] = {};
    if (::readlink(dev.c_str(), path, sizeof path - 1) < 0) return disk_error("cannot name the loop device", errno);
    if (::mount(path, mount_point.c_str(), "ext4", MS_NOSUID | MS_NODEV, "noinit_itable") != 0)
        return disk_error("cannot mount " + image.string(), errno);
    return result<void>{};  // the device's descriptor closes here; the mount keeps it attached
}

result<void> create_sandbox_disk(disk_image_cache& cache, std::uint32_t mb, fs::path const& image,
                                 fs::path const& mount_point)
{
    auto pristine = cache.image(mb);
    if (!pristine) return pristine.error();
    if (auto copied = sparse_copy(*pristine, image); !copied) {
        ::unlink(image.c_str());
        return copied.error();
    }
    if (auto mounted = mount_sandbox_disk(image, mount_point); !mounted) {
        ::unlink(image.c_str());
        return mounted.error();
    }
    // The file system's own root holds lost+found; the sandbox's directories go next to it.
    return result<void>{};
}

void unmount_sandbox_disk(fs::path const& mount_point)
{
    while (is_mount_point(mount_point))
        if (::umount2(mount_point.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0) break;
}

std::vector<std::string> loop_devices_of(fs::path const& image)
{
    std::vector<std::string> devices;
    std::error_code ec;
    auto const want = fs::weakly_canonical(image, ec).string();
    for (auto const& entry : fs::directory_iterator("/sys/block", ec)) {
        std::ifstream in(entry.path() / "loop" / "backing_file");
        std::string backing;
        if (!std::getline(in, backing)) continue;
        if (backing.rfind(want, 0) == 0) devices.push_back(entry.path().filename().string());
    }
    return devices;
}

}  // namespace prism_e2b::local::detail
