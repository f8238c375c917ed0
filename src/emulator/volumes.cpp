// The volume store (volumes.hpp).
#include "emulator/volumes.hpp"

#include <prism_e2b/redactor.hpp>

#include "emulator/random_ids.hpp"
#include "emulator/sandbox_fs.hpp"
#include "emulator/small_files.hpp"
#include "emulator/state_records.hpp"

#include <boost/json.hpp>

#include <array>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr char volume_file[] = "volume.json";

std::string volume_scope(std::string const& id) { return "prism-e2b-local/volume/" + id; }

std::optional<volume_record> parse_volume_record(fs::path const& dir)
{
    auto const rec = read_record(dir / volume_file);
    if (!rec) return std::nullopt;
    auto const& o = *rec;
    auto str = [&](char const* k) { return field_string(o, k); };
    auto num = [&](char const* k) { return field_int(o, k); };
    volume_record r;
    r.id = str("volumeID");
    r.name = str("name");
    r.token = str("token");
    r.created_ms = num("createdAtMs");
    r.seq = static_cast<std::uint64_t>(num("seq"));
    if (r.id != dir.filename().string() || !valid_volume_name(r.name) || r.token.empty()) return std::nullopt;
    return r;
}

/// The record, 0600, written whole before the directory is published (a rename).
bool write_volume_record(fs::path const& dir, volume_record const& r)
{
    json::object o;
    o["volumeID"] = r.id;
    o["name"] = r.name;
    o["token"] = r.token;
    o["createdAtMs"] = r.created_ms;
    o["seq"] = r.seq;
    return write_record(dir / volume_file, json::serialize(o), 0600);
}

}  // namespace

bool valid_volume_name(std::string_view name)
{
    if (name.empty() || name.size() > 64) return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    return true;
}

std::optional<std::string> volume_mount_path_problem(std::string_view path)
{
    if (path.empty() || path.front() != '/') return "must be an absolute path";
    if (path.size() > 255) return "is longer than 255 bytes";
    auto const norm = normalize_sandbox_path(path);
    if (!norm || *norm != path) return "must be a normalised path (no '.', '..', '//' or trailing '/')";
    if (path == "/") return "cannot be /";
    auto const first = path.substr(1, path.find('/', 1) == std::string_view::npos ? path.npos : path.find('/', 1) - 1);
    static constexpr std::array<std::string_view, 12> system = {"usr",    "bin", "sbin", "lib",  "lib32", "lib64",
                                                                "libx32", "etc", "opt",  "proc", "dev",   "sys"};
    for (auto s : system)
        if (first == s) return "is inside /" + std::string(s) + ", which the sandbox's system provides";
    return std::nullopt;
}

void volume_store::open(fs::path dir)
{
    std::lock_guard lk(mutex_);
    dir_ = std::move(dir);
    ::mkdir(dir_.c_str(), 0700);
    ::chmod(dir_.c_str(), 0700);
    std::error_code ec;
    for (auto const& e : fs::directory_iterator(dir_, ec)) {
        auto const name = e.path().filename().string();
        if (name.rfind(".partial-", 0) == 0) {  // a creation cut short by a crash
            remove_tree(e.path().string());
            continue;
        }
        if (auto r = parse_volume_record(e.path())) {
            secret_redactor::global().add(r->token, volume_scope(r->id));
            next_seq_ = std::max(next_seq_, r->seq + 1);
            by_id_[r->id] = std::move(*r);
        }
    }
}

result<volume_record> volume_store::create(std::string const& name)
{
    if (!valid_volume_name(name))
        return error(errc::invalid_argument, "name must be 1 to 64 of [A-Za-z0-9_-]", {"volume"});
    std::unique_lock lk(mutex_);
    if (dir_.empty()) return error(errc::server_error, "the volume store is not open", {"volume"});
    for (auto const& [id, r] : by_id_)
        if (r.name == name) return error(errc::conflict, "a volume named \"" + name + "\" exists", {"volume"});
    volume_record r;
    r.id = random_id(20);
    r.name = name;
    r.token = random_hex(32);
    r.created_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    r.seq = next_seq_++;
    auto const partial = dir_ / (".partial-" + r.id);
    auto const data = partial / "data";
    auto fail = [&](std::string const& what) {
        remove_tree(partial.string());
        return error(errc::server_error, "cannot create the volume: " + what, {"volume"});
    };
    if (::mkdir(partial.c_str(), 0700) != 0) return fail("its directory");
    // Its root belongs to the sandbox's "user", as /home/user does: what a sandbox writes there by default.
    if (::mkdir(data.c_str(), 0755) != 0 ||
        (::geteuid() == 0 && ::chown(data.c_str(), volume_default_id, volume_default_id) != 0))
        return fail("its data directory");
    if (!write_volume_record(partial, r)) return fail("its record");
    if (::rename(partial.c_str(), (dir_ / r.id).c_str()) != 0) return fail("publishing it");
    secret_redactor::global().add(r.token, volume_scope(r.id));
    by_id_[r.id] = r;
    return r;
}

std::optional<volume_record> volume_store::find(std::string_view id) const
{
    std::lock_guard lk(mutex_);
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return std::nullopt;
    return it->second;
}

std::optional<volume_record> volume_store::find_by_name(std::string_view name) const
{
    std::lock_guard lk(mutex_);
    for (auto const& [id, r] : by_id_)
        if (r.name == name) return r;
    return std::nullopt;
}

std::vector<volume_record> volume_store::list() const
{
    std::vector<volume_record> out;
    {
        std::lock_guard lk(mutex_);
        for (auto const& [id, r] : by_id_) out.push_back(r);
    }
    std::sort(out.begin(), out.end(), [](auto const& a, auto const& b) { return a.seq < b.seq; });
    return out;
}

bool volume_store::remove(std::string_view id)
{
    std::string key;
    {
        std::lock_guard lk(mutex_);
        auto it = by_id_.find(id);
        if (it == by_id_.end()) return false;
        key = it->first;
        by_id_.erase(it);
    }
    // Out of sight first (a rename), then removed however deep: a crash in between leaves a
    // .partial- directory, which the next open() removes.
    auto const gone = dir_ / (".partial-" + key);
    if (::rename((dir_ / key).c_str(), gone.c_str()) == 0) remove_tree(gone.string());
    secret_redactor::global().release(volume_scope(key));
    return true;
}

fs::path volume_store::data_dir(std::string_view id) const { return dir_ / std::string(id) / "data"; }

}  // namespace prism_e2b::local::detail
