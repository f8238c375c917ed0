// The template registry: `base` and state_dir/templates/<id>.json (templates.hpp).
#include "emulator/templates.hpp"

#include "emulator/small_files.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

error bad(std::string const& id, std::string const& what)
{
    return error(errc::invalid_argument, "template \"" + id + "\" is malformed: " + what, {"template"});
}

/// A positive integer field no larger than `max`, or an error text.
std::optional<std::string> positive(json::object const& o, char const* key, std::uint64_t max, std::uint64_t& out)
{
    auto const* v = o.if_contains(key);
    if (!v || v->is_null()) return std::nullopt;
    if (v->is_int64() && v->as_int64() > 0)
        out = static_cast<std::uint64_t>(v->as_int64());
    else if (v->is_uint64())
        out = v->as_uint64();
    else
        return std::string(key) + " must be a positive integer";
    if (out == 0 || out > max) return std::string(key) + " must be between 1 and " + std::to_string(max);
    return std::nullopt;
}

bool is_tarball(fs::path const& p)
{
    auto const name = p.filename().string();
    auto ends = [&](std::string_view s) { return name.size() > s.size() && name.ends_with(s); };
    return ends(".tar") || ends(".tar.gz") || ends(".tgz");
}

}  // namespace

std::string template_file_id(std::string_view id)
{
    if (id.ends_with(":default")) id.remove_suffix(8);
    if (id.empty() || id.size() > 64 || id.front() == '.') return {};
    bool const ok = std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c == '.';
    });
    return ok ? std::string(id) : std::string();
}

result<template_spec> parse_template(std::string const& id, std::string const& json_text,
                                     cgroup_limits const& base_limits)
{
    boost::system::error_code ec;
    auto v = json::parse(json_text, ec);
    if (ec || !v.is_object()) return bad(id, "not a JSON object");
    auto const& o = v.as_object();
    template_spec t;
    t.id = id;
    t.limits = base_limits;
    if (auto const* r = o.if_contains("rootfs"); r && !r->is_null()) {
        if (!r->is_string() || r->as_string().empty() || r->as_string()[0] != '/')
            return bad(id, "rootfs must be an absolute path");
        t.rootfs = std::string(r->as_string());
        t.rootfs_is_tarball = is_tarball(t.rootfs);
        std::error_code fec;
        if (t.rootfs_is_tarball ? !fs::is_regular_file(t.rootfs, fec) : !fs::is_directory(t.rootfs, fec))
            return bad(id, "rootfs " + t.rootfs.string() + " is not a directory or a .tar/.tar.gz/.tgz file");
    }
    std::uint64_t n = 0;
    if (auto e = positive(o, "cpuCount", 256, n)) return bad(id, *e);
    if (n) t.limits.cpu_count = static_cast<unsigned>(n);
    n = 0;
    // 16 MiB: below that not even the sandbox's init and a shell fit.
    if (auto e = positive(o, "memoryMB", 1u << 20, n)) return bad(id, *e);
    if (n && n < 16) return bad(id, "memoryMB must be at least 16");
    if (n) t.limits.memory_mb = static_cast<std::uint32_t>(n);
    n = 0;
    if (auto e = positive(o, "diskSizeMB", 1u << 30, n)) return bad(id, *e);
    t.disk_mb = static_cast<std::uint32_t>(n);
    if (auto const* u = o.if_contains("user"); u && !u->is_null()) {
        if (!u->is_string() || (u->as_string() != "user" && u->as_string() != "root"))
            return bad(id, "user must be \"user\" or \"root\"");
        t.user = std::string(u->as_string());
    }
    if (auto const* e = o.if_contains("envVars"); e && !e->is_null()) {
        if (!e->is_object()) return bad(id, "envVars must be an object of strings");
        for (auto const& [k, val] : e->as_object()) {
            if (!val.is_string() || k.empty() || k.find('=') != json::string_view::npos)
                return bad(id, "envVars must be an object of strings with names without '='");
            t.env_vars[std::string(k)] = std::string(val.as_string());
        }
    }
    if (auto const* c = o.if_contains("startCmd"); c && !c->is_null()) {
        if (!c->is_string()) return bad(id, "startCmd must be a string");
        t.start_cmd = std::string(c->as_string());
    }
    return t;
}

std::string template_json(template_spec const& t)
{
    json::object o;
    o["cpuCount"] = t.limits.cpu_count;
    o["memoryMB"] = t.limits.memory_mb;
    if (t.disk_mb) o["diskSizeMB"] = t.disk_mb;
    o["user"] = t.user;
    json::object env;
    for (auto const& [k, v] : t.env_vars) env[k] = v;
    o["envVars"] = std::move(env);
    if (!t.start_cmd.empty()) o["startCmd"] = t.start_cmd;
    return json::serialize(o);
}

result<template_spec> find_template(fs::path const& templates_dir, std::string_view id,
                                    cgroup_limits const& base_limits)
{
    auto const file_id = template_file_id(id);
    auto unknown = [&] { return error(errc::not_found, "template '" + std::string(id) + "' not found", {"template"}); };
    if (file_id.empty()) return unknown();
    auto const file = templates_dir / (file_id + ".json");
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
        if (file_id != "base") return unknown();
        template_spec base;
        base.id = "base";
        base.limits = base_limits;
        return base;
    }
    return parse_template(file_id, read_small_file(file.string()), base_limits);
}

}  // namespace prism_e2b::local::detail
