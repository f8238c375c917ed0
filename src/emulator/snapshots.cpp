// The snapshot store (snapshots.hpp).
#include "emulator/snapshots.hpp"

#include "emulator/engines/gvisor/runsc.hpp"
#include "emulator/random_ids.hpp"
#include "emulator/sandbox_fs.hpp"
#include "emulator/small_files.hpp"
#include "emulator/state_records.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr char record_file[] = "snapshot.json";

std::string record_json(snapshot_record const& r)
{
    json::object o;
    o["key"] = r.key;
    o["name"] = r.name;
    o["sandboxID"] = r.sandbox_id;
    o["memory"] = r.memory;
    o["templateID"] = r.spec.id;
    o["createdAtMs"] = r.created_ms;
    o["seq"] = r.seq;
    o["template"] = json::parse(template_json(r.spec));
    return json::serialize(o);
}

std::optional<snapshot_record> parse_record(fs::path const& dir)
{
    auto const rec = read_record(dir / record_file);
    if (!rec) return std::nullopt;
    auto const& o = *rec;
    auto str = [&](char const* k) { return field_string(o, k); };
    auto num = [&](char const* k) { return field_int(o, k); };
    snapshot_record r;
    r.key = str("key");
    r.name = str("name");
    r.sandbox_id = str("sandboxID");
    r.created_ms = num("createdAtMs");
    r.seq = static_cast<std::uint64_t>(num("seq"));
    auto const* mem = o.if_contains("memory");
    r.memory = mem && mem->is_bool() && mem->as_bool() && gvisor_has_memory_image(dir);
    auto const* t = o.if_contains("template");
    if (r.key != dir.filename().string() || !t || !t->is_object()) return std::nullopt;
    auto spec = parse_template(str("templateID"), json::serialize(*t), cgroup_limits{});
    if (!spec) return std::nullopt;
    r.spec = std::move(*spec);
    r.spec.rootfs = dir / "root";
    r.spec.from_snapshot = true;
    if (r.memory) r.spec.memory_snapshot = dir;
    return r;
}

bool same_id(snapshot_record const& r, std::string_view id)
{
    if (id.ends_with(":default")) id.remove_suffix(8);
    return id == r.key || (!r.name.empty() && id == r.name);
}

}  // namespace

bool valid_snapshot_name(std::string_view name) { return name != "base" && template_file_id(name) == name; }

void snapshot_store::open(fs::path dir)
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
        if (auto r = parse_record(e.path())) {
            next_seq_ = std::max(next_seq_, r->seq + 1);
            by_key_[r->key] = std::move(*r);
        }
    }
}

result<snapshot_record> snapshot_store::add(snapshot_record rec,
                                            std::function<result<bool>(fs::path const& dir)> const& fill)
{
    if (dir_.empty()) return error(errc::server_error, "the snapshot store is not open", {"snapshot"});
    rec.key = random_id(20);
    rec.created_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    auto const partial = dir_ / (".partial-" + rec.key);
    auto const final_dir = dir_ / rec.key;
    auto fail = [&](error e) {
        remove_tree(partial.string());
        return e;
    };
    if (::mkdir(partial.c_str(), 0700) != 0)
        return error(errc::server_error, "cannot create the snapshot's directory", {"snapshot"});
    auto filled = fill(partial);
    if (!filled) return fail(filled.error());
    rec.memory = *filled;
    std::unique_lock lk(mutex_);
    rec.seq = next_seq_++;
    if (!write_record(partial / record_file, record_json(rec), 0600)) {
        lk.unlock();
        return fail(error(errc::server_error, "cannot write the snapshot's record", {"snapshot"}));
    }
    if (::rename(partial.c_str(), final_dir.c_str()) != 0) {
        lk.unlock();
        return fail(error(errc::server_error, "cannot publish the snapshot", {"snapshot"}));
    }
    rec.spec.rootfs = final_dir / "root";
    rec.spec.from_snapshot = true;
    if (rec.memory) rec.spec.memory_snapshot = final_dir;
    std::vector<std::string> replaced;
    if (!rec.name.empty())
        for (auto const& [key, r] : by_key_)
            if (r.name == rec.name) replaced.push_back(key);
    for (auto const& key : replaced) by_key_.erase(key);
    by_key_[rec.key] = rec;
    lk.unlock();
    for (auto const& key : replaced) remove_tree((dir_ / key).string());
    return rec;
}

std::optional<snapshot_record> snapshot_store::find_locked(std::string_view id) const
{
    for (auto const& [key, r] : by_key_)
        if (same_id(r, id)) return r;
    return std::nullopt;
}

std::optional<snapshot_record> snapshot_store::find(std::string_view id) const
{
    std::lock_guard lk(mutex_);
    return find_locked(id);
}

std::vector<snapshot_record> snapshot_store::list() const
{
    std::vector<snapshot_record> out;
    {
        std::lock_guard lk(mutex_);
        for (auto const& [key, r] : by_key_) out.push_back(r);
    }
    std::sort(out.begin(), out.end(), [](auto const& a, auto const& b) { return a.seq < b.seq; });
    return out;
}

bool snapshot_store::remove(std::string_view id)
{
    std::string key;
    {
        std::lock_guard lk(mutex_);
        auto r = find_locked(id);
        if (!r) return false;
        key = r->key;
        by_key_.erase(key);
    }
    // Out of sight first (a rename), then the tree: a crash in between leaves only a partial.
    auto const doomed = dir_ / (".partial-" + key);
    if (::rename((dir_ / key).c_str(), doomed.c_str()) == 0) remove_tree(doomed.string());
    return true;
}

}  // namespace prism_e2b::local::detail
