#include "wire/protojson.hpp"

#include "protocol/base64.hpp"

#include <boost/json.hpp>

#include <cmath>
#include <limits>

namespace json = boost::json;

namespace prism_e2b::wire::protojson {
namespace {

error bad(std::string_view what)
{
    return error(errc::protocol_error, "malformed protobuf-JSON: " + std::string(what));
}

/// The field under its JSON name or its proto name; nullptr when absent or null.
json::value const* field(json::object const& o, std::string_view camel, std::string_view snake = {})
{
    auto const* v = o.if_contains(camel);
    if (!v && !snake.empty()) v = o.if_contains(snake);
    if (v && v->is_null()) return nullptr;
    return v;
}

result<std::string> to_string(json::value const* v, std::string_view name)
{
    if (!v) return std::string{};
    if (!v->is_string()) return bad(std::string(name) + " is not a string");
    return std::string(v->get_string());
}

result<bool> to_bool(json::value const* v, std::string_view name)
{
    if (!v) return false;
    if (!v->is_bool()) return bad(std::string(name) + " is not a boolean");
    return v->get_bool();
}

/// Integers arrive as numbers or (int64 and friends) as decimal strings.
result<std::int64_t> to_int(json::value const* v, std::string_view name, std::int64_t lo, std::int64_t hi)
{
    if (!v) return std::int64_t{0};
    std::int64_t n = 0;
    if (v->is_int64()) {
        n = v->get_int64();
    } else if (v->is_uint64()) {
        if (v->get_uint64() > static_cast<std::uint64_t>(hi)) return bad(std::string(name) + " out of range");
        n = static_cast<std::int64_t>(v->get_uint64());
    } else if (v->is_double()) {
        double d = v->get_double();
        // hi + 1 as a double: double(INT64_MAX) rounds up to 2^63, which does not convert.
        if (!(std::trunc(d) == d) || d < static_cast<double>(lo) || d >= static_cast<double>(hi) + 1.0)
            return bad(std::string(name) + " is not an integer in range");
        n = static_cast<std::int64_t>(d);
    } else if (v->is_string()) {
        std::string_view s = v->get_string();
        bool neg = !s.empty() && s.front() == '-';
        std::string_view digits = neg ? s.substr(1) : s;
        if (digits.empty() || digits.size() > 19) return bad(std::string(name) + " is not an integer");
        std::uint64_t u = 0;
        for (char c : digits) {
            if (c < '0' || c > '9') return bad(std::string(name) + " is not an integer");
            u = u * 10 + static_cast<unsigned>(c - '0');
        }
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return bad(std::string(name) + " out of range");
        n = neg ? -static_cast<std::int64_t>(u) : static_cast<std::int64_t>(u);
    } else {
        return bad(std::string(name) + " is not an integer");
    }
    if (n < lo || n > hi) return bad(std::string(name) + " out of range");
    return n;
}

/// `bytes`: standard base64; the URL-safe alphabet and missing padding are
/// accepted too, as protobuf-JSON parsers must.
result<std::string> to_bytes(json::value const* v, std::string_view name)
{
    if (!v) return std::string{};
    if (!v->is_string()) return bad(std::string(name) + " is not a base64 string");
    std::string s(v->get_string());
    if (auto d = detail::base64_decode(s)) return std::move(*d);
    std::string unpadded = s;
    while (!unpadded.empty() && unpadded.back() == '=') unpadded.pop_back();
    if (unpadded.find_first_of("+/") == std::string::npos) {
        if (auto d = detail::base64url_decode(unpadded)) return std::move(*d);
    }
    std::string padded = unpadded;
    while (padded.size() % 4 != 0) padded.push_back('=');
    if (padded.find_first_of("-_") == std::string::npos) {
        if (auto d = detail::base64_decode(padded)) return std::move(*d);
    }
    return bad(std::string(name) + " is not valid base64");
}

result<json::object const*> to_object(json::value const* v, std::string_view name)
{
    if (!v) return static_cast<json::object const*>(nullptr);
    if (!v->is_object()) return bad(std::string(name) + " is not an object");
    return &v->get_object();
}

result<json::value> parse_json(std::string_view text)
{
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec) return bad("invalid JSON: " + ec.message());
    if (!v.is_object()) return bad("message is not a JSON object");
    return v;
}

json::object selector_object(e2b::process_selector const& s)
{
    json::object o;
    if (s.pid)
        o["pid"] = *s.pid;
    else if (s.tag)
        o["tag"] = *s.tag;
    return o;
}

result<json::object> selector_message(e2b::process_selector const& s)
{
    if (!s.pid && !s.tag) return error(errc::invalid_argument, "process selector needs a pid or a tag");
    json::object o;
    o["process"] = selector_object(s);
    return o;
}

result<e2b::file_type> to_file_type(json::value const* v)
{
    if (!v) return e2b::file_type::unspecified;
    if (v->is_string()) {
        std::string_view s = v->get_string();
        if (s == "FILE_TYPE_FILE" || s == "file") return e2b::file_type::file;
        if (s == "FILE_TYPE_DIRECTORY" || s == "dir" || s == "directory") return e2b::file_type::directory;
        if (s == "FILE_TYPE_SYMLINK" || s == "symlink") return e2b::file_type::symlink;
        return e2b::file_type::unspecified;  // unknown enum names read as the default
    }
    auto n = to_int(v, "type", std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max());
    if (!n) return n.error();
    switch (*n) {
        case 1:
            return e2b::file_type::file;
        case 2:
            return e2b::file_type::directory;
        case 3:
            return e2b::file_type::symlink;
        default:
            return e2b::file_type::unspecified;
    }
}

result<e2b::entry_info> to_entry(json::object const& o)
{
    e2b::entry_info e;
    auto name = to_string(field(o, "name"), "name");
    auto path = to_string(field(o, "path"), "path");
    auto type = to_file_type(field(o, "type"));
    auto size = to_int(field(o, "size"), "size", std::numeric_limits<std::int64_t>::min(),
                       std::numeric_limits<std::int64_t>::max());
    auto mode = to_int(field(o, "mode"), "mode", 0, std::numeric_limits<std::uint32_t>::max());
    auto perms = to_string(field(o, "permissions"), "permissions");
    auto owner = to_string(field(o, "owner"), "owner");
    auto group = to_string(field(o, "group"), "group");
    auto mtime = to_string(field(o, "modifiedTime", "modified_time"), "modifiedTime");
    for (auto const* r : {&name, &path, &perms, &owner, &group, &mtime})
        if (!*r) return r->error();
    if (!type) return type.error();
    if (!size) return size.error();
    if (!mode) return mode.error();
    e.name = std::move(*name);
    e.path = std::move(*path);
    e.type = *type;
    e.size = *size;
    e.mode = static_cast<std::uint32_t>(*mode);
    e.permissions = std::move(*perms);
    e.owner = std::move(*owner);
    e.group = std::move(*group);
    e.modified_time = std::move(*mtime);
    if (auto const* t = field(o, "symlinkTarget", "symlink_target")) {
        auto s = to_string(t, "symlinkTarget");
        if (!s) return s.error();
        e.symlink_target = std::move(*s);
    }
    return e;
}

result<std::vector<e2b::entry_info>> to_entries(json::value const* v, std::string_view name)
{
    std::vector<e2b::entry_info> out;
    if (!v) return out;
    if (!v->is_array()) return bad(std::string(name) + " is not an array");
    for (auto const& item : v->get_array()) {
        if (!item.is_object()) return bad(std::string(name) + " holds a non-object");
        auto e = to_entry(item.get_object());
        if (!e) return e.error();
        out.push_back(std::move(*e));
    }
    return out;
}

}  // namespace

// ---- requests ---------------------------------------------------------------

std::string start_request(e2b::start_process_params const& p)
{
    json::object process;
    process["cmd"] = p.process.cmd;
    if (!p.process.args.empty()) {
        json::array args;
        for (auto const& a : p.process.args) args.emplace_back(a);
        process["args"] = std::move(args);
    }
    if (!p.process.envs.empty()) {
        json::object envs;
        for (auto const& [k, v] : p.process.envs) envs[k] = v;
        process["envs"] = std::move(envs);
    }
    if (p.process.cwd) process["cwd"] = *p.process.cwd;
    json::object o;
    o["process"] = std::move(process);
    if (p.tag) o["tag"] = *p.tag;
    o["stdin"] = p.stdin;  // optional bool: present even when false
    return json::serialize(o);
}

result<std::string> selector_request(e2b::process_selector const& s)
{
    auto o = selector_message(s);
    if (!o) return o.error();
    return json::serialize(*o);
}

result<std::string> send_input_request(e2b::process_selector const& s, std::string_view bytes)
{
    auto o = selector_message(s);
    if (!o) return o.error();
    json::object input;
    input["stdin"] = detail::base64_encode(bytes);
    (*o)["input"] = std::move(input);
    return json::serialize(*o);
}

result<std::string> send_signal_request(e2b::process_selector const& s, process_signal sig)
{
    auto o = selector_message(s);
    if (!o) return o.error();
    (*o)["signal"] = sig == process_signal::sigkill ? "SIGNAL_SIGKILL" : "SIGNAL_SIGTERM";
    return json::serialize(*o);
}

std::string path_request(std::string_view path)
{
    json::object o;
    o["path"] = path;
    return json::serialize(o);
}

std::string list_dir_request(std::string_view path, std::uint32_t depth)
{
    json::object o;
    o["path"] = path;
    if (depth != 0) o["depth"] = depth;
    return json::serialize(o);
}

std::string watch_dir_request(e2b::watch_dir_params const& p)
{
    json::object o;
    o["path"] = p.path;
    if (p.recursive) o["recursive"] = true;
    if (p.include_entry) o["includeEntry"] = true;
    return json::serialize(o);
}

std::string move_request(std::string_view source, std::string_view destination)
{
    json::object o;
    o["source"] = source;
    o["destination"] = destination;
    return json::serialize(o);
}

// ---- responses --------------------------------------------------------------

result<e2b::process_event> parse_process_event(std::string_view text)
{
    auto v = parse_json(text);
    if (!v) return v.error();
    auto ev = to_object(field(v->get_object(), "event"), "event");
    if (!ev) return ev.error();
    if (!*ev) return bad("response without an event");
    auto const& e = **ev;
    if (auto const* s = field(e, "start")) {
        auto so = to_object(s, "start");
        if (!so) return so.error();
        auto pid = to_int(field(**so, "pid"), "pid", 0, std::numeric_limits<std::uint32_t>::max());
        if (!pid) return pid.error();
        return e2b::process_event{e2b::start_event{static_cast<std::uint32_t>(*pid)}};
    }
    if (auto const* d = field(e, "data")) {
        auto dobj = to_object(d, "data");
        if (!dobj) return dobj.error();
        e2b::data_event out;
        json::value const* payload = nullptr;
        if ((payload = field(**dobj, "stdout")))
            out.stream = e2b::data_event::stream_kind::stdout_data;
        else if ((payload = field(**dobj, "stderr")))
            out.stream = e2b::data_event::stream_kind::stderr_data;
        else if ((payload = field(**dobj, "pty")))
            out.stream = e2b::data_event::stream_kind::pty;
        auto bytes = to_bytes(payload, "data");
        if (!bytes) return bytes.error();
        out.bytes = std::move(*bytes);
        return e2b::process_event{std::move(out)};
    }
    if (auto const* en = field(e, "end")) {
        auto eo = to_object(en, "end");
        if (!eo) return eo.error();
        auto const& o = **eo;
        e2b::end_event out;
        // protobuf-JSON omits defaults: an absent exitCode is 0.
        auto code = to_int(field(o, "exitCode", "exit_code"), "exitCode", std::numeric_limits<std::int32_t>::min(),
                           std::numeric_limits<std::int32_t>::max());
        auto exited = to_bool(field(o, "exited"), "exited");
        auto status = to_string(field(o, "status"), "status");
        if (!code) return code.error();
        if (!exited) return exited.error();
        if (!status) return status.error();
        out.exit_code = static_cast<std::int32_t>(*code);
        out.exited = *exited;
        out.status = std::move(*status);
        if (auto const* err = field(o, "error")) {
            auto s = to_string(err, "error");
            if (!s) return s.error();
            out.error = std::move(*s);
        }
        return e2b::process_event{std::move(out)};
    }
    if (auto const* k = field(e, "keepalive", "keep_alive")) {
        auto ko = to_object(k, "keepalive");
        if (!ko) return ko.error();
        return e2b::process_event{e2b::keepalive_event{}};
    }
    return bad("event with no known kind");
}

result<std::vector<e2b::process_info>> parse_list_response(std::string_view text)
{
    auto v = parse_json(text);
    if (!v) return v.error();
    std::vector<e2b::process_info> out;
    auto const* ps = field(v->get_object(), "processes");
    if (!ps) return out;
    if (!ps->is_array()) return bad("processes is not an array");
    for (auto const& item : ps->get_array()) {
        if (!item.is_object()) return bad("processes holds a non-object");
        auto const& o = item.get_object();
        e2b::process_info info;
        auto pid = to_int(field(o, "pid"), "pid", 0, std::numeric_limits<std::uint32_t>::max());
        if (!pid) return pid.error();
        info.pid = static_cast<std::uint32_t>(*pid);
        if (auto const* t = field(o, "tag")) {
            auto s = to_string(t, "tag");
            if (!s) return s.error();
            info.tag = std::move(*s);
        }
        auto cfg = to_object(field(o, "config"), "config");
        if (!cfg) return cfg.error();
        if (*cfg) {
            auto const& c = **cfg;
            auto cmd = to_string(field(c, "cmd"), "cmd");
            if (!cmd) return cmd.error();
            info.config.cmd = std::move(*cmd);
            if (auto const* args = field(c, "args")) {
                if (!args->is_array()) return bad("args is not an array");
                for (auto const& a : args->get_array()) {
                    if (!a.is_string()) return bad("args holds a non-string");
                    info.config.args.emplace_back(a.get_string());
                }
            }
            if (auto const* envs = field(c, "envs")) {
                if (!envs->is_object()) return bad("envs is not an object");
                for (auto const& kv : envs->get_object()) {
                    if (!kv.value().is_string()) return bad("envs holds a non-string");
                    info.config.envs[std::string(kv.key())] = std::string(kv.value().get_string());
                }
            }
            if (auto const* cwd = field(c, "cwd")) {
                auto s = to_string(cwd, "cwd");
                if (!s) return s.error();
                info.config.cwd = std::move(*s);
            }
        }
        out.push_back(std::move(info));
    }
    return out;
}

result<e2b::entry_info> parse_entry_response(std::string_view text)
{
    auto v = parse_json(text);
    if (!v) return v.error();
    auto eo = to_object(field(v->get_object(), "entry"), "entry");
    if (!eo) return eo.error();
    if (!*eo) return bad("response without an entry");
    return to_entry(**eo);
}

result<std::vector<e2b::entry_info>> parse_list_dir_response(std::string_view text)
{
    auto v = parse_json(text);
    if (!v) return v.error();
    return to_entries(field(v->get_object(), "entries"), "entries");
}

namespace {

e2b::fs_event_type to_fs_event_type(json::value const& v)
{
    static constexpr std::pair<std::string_view, e2b::fs_event_type> names[] = {
        {"EVENT_TYPE_CREATE", e2b::fs_event_type::create},
        {"EVENT_TYPE_WRITE", e2b::fs_event_type::write},
        {"EVENT_TYPE_REMOVE", e2b::fs_event_type::remove},
        {"EVENT_TYPE_RENAME", e2b::fs_event_type::rename},
        {"EVENT_TYPE_CHMOD", e2b::fs_event_type::chmod}};
    if (v.is_string()) {
        for (auto const& [name, type] : names)
            if (v.get_string() == name) return type;
    } else if (v.is_int64() && v.get_int64() >= 1 && v.get_int64() <= 5) {
        return names[v.get_int64() - 1].second;  // enum numbers follow filesystem.proto's order
    }
    return e2b::fs_event_type::unspecified;  // unknown names read as the default
}

}  // namespace

result<watch_message> parse_watch_response(std::string_view text)
{
    auto v = parse_json(text);
    if (!v) return v.error();
    auto const& o = v->get_object();
    if (field(o, "start")) return watch_message{watch_start{}};
    if (field(o, "keepalive", "keep_alive")) return watch_message{watch_keepalive{}};
    auto fs = to_object(field(o, "filesystem"), "filesystem");
    if (!fs) return fs.error();
    if (!*fs) return bad("watch response with no known kind");
    e2b::fs_event ev;
    auto name = to_string(field(**fs, "name"), "name");
    if (!name) return name.error();
    ev.name = std::move(*name);
    if (auto const* t = field(**fs, "type")) ev.type = to_fs_event_type(*t);
    if (auto const* e = field(**fs, "entry")) {
        if (!e->is_object()) return bad("entry is not an object");
        auto entry = to_entry(e->get_object());
        if (!entry) return entry.error();
        ev.entry = std::move(*entry);
    }
    return watch_message{std::move(ev)};
}

result<std::vector<e2b::entry_info>> parse_upload_response(std::string_view text)
{
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec) return bad("invalid JSON: " + ec.message());
    return to_entries(&v, "upload answer");
}

result<end_of_stream> parse_end_of_stream(std::string_view text)
{
    auto v = parse_json(text);
    if (!v) return v.error();
    end_of_stream out;
    auto eo = to_object(field(v->get_object(), "error"), "error");
    if (!eo) return eo.error();
    if (*eo) {
        out.failed = true;
        auto code = to_string(field(**eo, "code"), "error.code");
        auto msg = to_string(field(**eo, "message"), "error.message");
        if (!code) return code.error();
        if (!msg) return msg.error();
        out.code = code->empty() ? "unknown" : std::move(*code);
        out.message = std::move(*msg);
    }
    return out;
}

}  // namespace prism_e2b::wire::protojson
