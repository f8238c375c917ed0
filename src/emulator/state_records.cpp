// JSON state records: lenient field reads, whole-file synced writes.
#include "emulator/state_records.hpp"

#include "emulator/sandbox_fs.hpp"
#include "emulator/small_files.hpp"

#include <boost/json/parse.hpp>

#include <fcntl.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace json = boost::json;

std::optional<json::object> read_record(std::filesystem::path const& file)
{
    boost::system::error_code ec;
    auto v = json::parse(read_small_file(file.string()), ec);
    if (ec || !v.is_object()) return std::nullopt;
    return std::move(v.as_object());
}

bool write_record(std::filesystem::path const& file, std::string_view text, mode_t mode)
{
    unique_fd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    if (!fd) return false;
    return write_all(fd.get(), text) == 0 && ::fsync(fd.get()) == 0;
}

std::string field_string(json::object const& o, std::string_view key)
{
    auto const* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::int64_t field_int(json::object const& o, std::string_view key)
{
    auto const* v = o.if_contains(key);
    if (!v || !v->is_number()) return 0;
    boost::system::error_code ec;
    auto const n = v->to_number<std::int64_t>(ec);
    return ec ? 0 : n;
}

bool field_bool(json::object const& o, std::string_view key)
{
    auto const* v = o.if_contains(key);
    return v && v->is_bool() && v->as_bool();
}

std::map<std::string, std::string> field_string_map(json::object const& o, std::string_view key)
{
    std::map<std::string, std::string> m;
    if (auto const* v = o.if_contains(key); v && v->is_object())
        for (auto const& [k, val] : v->as_object())
            if (val.is_string()) m[std::string(k)] = std::string(val.as_string());
    return m;
}

}  // namespace prism_e2b::local::detail
