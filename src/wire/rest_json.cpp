#include "wire/rest_json.hpp"

#include <prism_e2b/redactor.hpp>

#include <boost/json.hpp>

#include <limits>

namespace json = boost::json;

namespace prism_e2b::wire::rest {
namespace {

constexpr char hex[] = "0123456789ABCDEF";

void percent(std::string& out, unsigned char c)
{
    out.push_back('%');
    out.push_back(hex[c >> 4]);
    out.push_back(hex[c & 15]);
}

bool alnum(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

error bad(std::string_view what)
{
    return error(errc::protocol_error, "malformed control-plane answer: " + std::string(what));
}

json::value const* field(json::object const& o, std::string_view name)
{
    auto const* v = o.if_contains(name);
    return v && !v->is_null() ? v : nullptr;
}

result<std::string> str(json::object const& o, std::string_view name, bool required)
{
    auto const* v = field(o, name);
    if (!v) {
        if (required) return bad("missing " + std::string(name));
        return std::string{};
    }
    if (!v->is_string()) return bad(std::string(name) + " is not a string");
    return std::string(v->get_string());
}

result<std::optional<std::string>> opt_str(json::object const& o, std::string_view name)
{
    auto const* v = field(o, name);
    if (!v) return std::optional<std::string>{};
    if (!v->is_string()) return bad(std::string(name) + " is not a string");
    return std::optional<std::string>(std::string(v->get_string()));
}

result<std::int32_t> i32(json::object const& o, std::string_view name)
{
    auto const* v = field(o, name);
    if (!v) return 0;
    // Range-checked before converting: an out-of-range double is UB (found by fuzz_rest_json).
    constexpr auto lo = std::numeric_limits<std::int32_t>::min();
    constexpr auto hi = std::numeric_limits<std::int32_t>::max();
    if (v->is_int64() && v->get_int64() >= lo && v->get_int64() <= hi) return static_cast<std::int32_t>(v->get_int64());
    if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(hi))
        return static_cast<std::int32_t>(v->get_uint64());
    if (v->is_double() && v->get_double() >= lo && v->get_double() <= hi)  // false for NaN
        return static_cast<std::int32_t>(v->get_double());
    if (v->is_number()) return bad(std::string(name) + " is out of range");
    return bad(std::string(name) + " is not a number");
}

result<e2b::metadata_map> metadata(json::object const& o)
{
    e2b::metadata_map out;
    auto const* v = field(o, "metadata");
    if (!v) return out;
    if (!v->is_object()) return bad("metadata is not an object");
    for (auto const& kv : v->get_object()) {
        if (!kv.value().is_string()) return bad("metadata value is not a string");
        out[std::string(kv.key())] = std::string(kv.value().get_string());
    }
    return out;
}

result<json::object const*> as_object(json::value const& v)
{
    if (!v.is_object()) return bad("not a JSON object");
    return &v.get_object();
}

/// A sandbox's id: required and never empty. Its envd access token is held
/// under it, and an empty scope would hold the token for the whole process.
result<std::string> sandbox_id(json::object const& o)
{
    auto id = str(o, "sandboxID", true);
    if (id && id->empty()) return bad("sandboxID is empty");
    return id;
}

/// A sandbox's envd access token is a secret for as long as the sandbox lives:
/// it is held under the sandbox id (released when the client kills it).
void register_token(std::optional<std::string> const& t, std::string const& sandbox_id)
{
    if (t && !t->empty()) secret_redactor::global().add(*t, sandbox_id);
}

result<e2b::sandbox_info> to_info(json::object const& o, bool detail)
{
    e2b::sandbox_info i;
    auto id = sandbox_id(o);
    auto tpl = str(o, "templateID", false);
    auto alias = str(o, "alias", false);
    auto started = str(o, "startedAt", false);
    auto end = str(o, "endAt", false);
    auto envd = str(o, "envdVersion", false);
    auto state = str(o, "state", false);
    for (auto const* r : {&id, &tpl, &alias, &started, &end, &envd, &state})
        if (!*r) return r->error();
    auto md = metadata(o);
    if (!md) return md.error();
    auto cpu = i32(o, "cpuCount");
    auto mem = i32(o, "memoryMB");
    auto disk = i32(o, "diskSizeMB");
    for (auto const* r : {&cpu, &mem, &disk})
        if (!*r) return r->error();
    i.sandbox_id = std::move(*id);
    i.template_id = std::move(*tpl);
    i.alias = std::move(*alias);
    i.started_at = std::move(*started);
    i.end_at = std::move(*end);
    i.envd_version = std::move(*envd);
    if (*state == "paused")
        i.state = e2b::sandbox_state::paused;
    else if (state->empty() || *state == "running")
        i.state = e2b::sandbox_state::running;
    else
        return bad("unknown sandbox state '" + *state + "'");
    i.metadata = std::move(*md);
    if (auto const* vm = field(o, "volumeMounts")) {
        if (!vm->is_array()) return bad("volumeMounts is not an array");
        for (auto const& m : vm->get_array()) {
            auto mo = as_object(m);
            if (!mo) return bad("a volume mount is not an object");
            auto name = str(**mo, "name", true);
            auto path = str(**mo, "path", true);
            if (!name) return name.error();
            if (!path) return path.error();
            i.volume_mounts.push_back({std::move(*name), std::move(*path)});
        }
    }
    i.cpu_count = *cpu;
    i.memory_mb = *mem;
    i.disk_size_mb = *disk;
    if (detail) {
        auto tok = opt_str(o, "envdAccessToken");
        auto dom = opt_str(o, "domain");
        if (!tok) return tok.error();
        if (!dom) return dom.error();
        i.envd_access_token = std::move(*tok);
        if (*dom && !(*dom)->empty()) i.domain = std::move(*dom);
        if (auto const* lc = field(o, "lifecycle")) {
            if (!lc->is_object()) return bad("lifecycle is not an object");
            e2b::sandbox_lifecycle l;
            auto const& lo = lc->get_object();
            if (auto const* ar = field(lo, "autoResume")) {
                if (!ar->is_bool()) return bad("lifecycle.autoResume is not a boolean");
                l.auto_resume = ar->get_bool();
            }
            auto ot = str(lo, "onTimeout", false);
            if (!ot) return ot.error();
            if (!ot->empty()) l.on_timeout = std::move(*ot);
            i.lifecycle = std::move(l);
        }
    }
    // Registered once the whole answer parsed: a rejected one holds nothing.
    if (detail) register_token(i.envd_access_token, i.sandbox_id);
    return i;
}

result<json::value> parse(std::string_view body)
{
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec) return bad("invalid JSON: " + ec.message());
    return v;
}

/// A response body that must be one JSON object.
result<json::object> parse_object(std::string_view body)
{
    auto v = parse(body);
    if (!v) return v.error();
    auto o = as_object(*v);
    if (!o) return o.error();
    return std::move(v->get_object());
}

}  // namespace

std::string encode_uri_component(std::string_view s)
{
    std::string out;
    for (unsigned char c : s) {
        if (alnum(c) || c == '-' || c == '_' || c == '.' || c == '!' || c == '~' || c == '*' || c == '\'' || c == '(' ||
            c == ')')
            out.push_back(static_cast<char>(c));
        else
            percent(out, c);
    }
    return out;
}

std::string form_urlencode(std::string_view s)
{
    std::string out;
    for (unsigned char c : s) {
        if (alnum(c) || c == '*' || c == '-' || c == '.' || c == '_')
            out.push_back(static_cast<char>(c));
        else if (c == ' ')
            out.push_back('+');
        else
            percent(out, c);
    }
    return out;
}

void append_query(std::string& target, std::string_view name, std::string_view value)
{
    target += target.find('?') == std::string::npos ? '?' : '&';
    target.append(name);
    target += '=';
    target += encode_uri_component(value);
}

std::string create_body(e2b::create_sandbox_params const& p, create_api api)
{
    json::object o;
    o["templateID"] = p.template_id;
    if (!p.metadata.empty()) {
        json::object m;
        for (auto const& [k, v] : p.metadata) m[k] = v;
        o["metadata"] = std::move(m);
    }
    if (!p.env_vars.empty()) {
        json::object m;
        for (auto const& [k, v] : p.env_vars) m[k] = v;
        o["envVars"] = std::move(m);
    }
    o["timeout"] = p.timeout.count();
    if (api == create_api::v1) o["secure"] = p.secure;
    o["allow_internet_access"] = p.allow_internet_access;
    if (p.auto_pause) o["autoPause"] = *p.auto_pause;
    if (p.auto_pause_memory) o["autoPauseMemory"] = *p.auto_pause_memory;
    if (p.auto_resume) {
        json::object ar;
        ar["enabled"] = *p.auto_resume;
        o["autoResume"] = std::move(ar);
    }
    if (!p.volume_mounts.empty()) {
        json::array mounts;
        for (auto const& m : p.volume_mounts) mounts.push_back(json::object{{"name", m.name}, {"path", m.path}});
        o["volumeMounts"] = std::move(mounts);
    }
    return json::serialize(o);
}

std::string timeout_body(std::chrono::seconds timeout)
{
    json::object o;
    o["timeout"] = timeout.count();
    return json::serialize(o);
}

std::string pause_body(bool memory)
{
    json::object o;
    o["memory"] = memory;
    return json::serialize(o);
}

std::string list_target(e2b::list_params const& p)
{
    std::string q;
    auto add = [&](std::string_view name, std::string const& value) {
        q += q.empty() ? '?' : '&';
        q += name;
        q += '=';
        q += value;
    };
    if (!p.metadata.empty()) {
        // Keys and values are encoded, joined as a form, and the form encoded
        // again as the query value (wire-notes.md: metadata=a%252520b%3Dc).
        std::string form;
        for (auto const& [k, v] : p.metadata) {
            if (!form.empty()) form += '&';
            form += form_urlencode(encode_uri_component(k)) + "=" + form_urlencode(encode_uri_component(v));
        }
        add("metadata", encode_uri_component(form));
    }
    if (!p.states.empty()) {
        std::string s;
        for (auto st : p.states) {
            if (!s.empty()) s += ',';  // style=form, explode=false: a literal comma
            s += st == e2b::sandbox_state::paused ? "paused" : "running";
        }
        add("state", s);
    }
    if (p.limit) add("limit", std::to_string(*p.limit));
    if (p.next_token) add("nextToken", encode_uri_component(*p.next_token));
    if (p.template_id) add("template", encode_uri_component(*p.template_id));
    if (p.started_after) add("startedAfter", encode_uri_component(*p.started_after));
    if (p.ascending) add("order", *p.ascending ? "asc" : "desc");
    return "/v2/sandboxes" + q;
}

result<e2b::sandbox_handle> parse_sandbox(std::string_view body)
{
    auto o = parse_object(body);
    if (!o) return o.error();
    e2b::sandbox_handle h;
    auto id = sandbox_id(*o);
    auto tpl = str(*o, "templateID", false);
    auto alias = str(*o, "alias", false);
    auto envd = str(*o, "envdVersion", false);
    for (auto const* r : {&id, &tpl, &alias, &envd})
        if (!*r) return r->error();
    auto tok = opt_str(*o, "envdAccessToken");
    auto dom = opt_str(*o, "domain");
    if (!tok) return tok.error();
    if (!dom) return dom.error();
    register_token(*tok, *id);
    h.sandbox_id = std::move(*id);
    h.template_id = std::move(*tpl);
    h.alias = std::move(*alias);
    h.envd_version = std::move(*envd);
    h.envd_access_token = std::move(*tok);
    if (*dom && !(*dom)->empty()) h.domain = std::move(*dom);
    return h;
}

result<e2b::sandbox_info> parse_sandbox_detail(std::string_view body)
{
    auto o = parse_object(body);
    if (!o) return o.error();
    return to_info(*o, true);
}

result<std::vector<e2b::sandbox_info>> parse_sandbox_list(std::string_view body)
{
    auto v = parse(body);
    if (!v) return v.error();
    std::vector<e2b::sandbox_info> out;
    if (v->is_null()) return out;
    if (!v->is_array()) return bad("sandbox list is not an array");
    for (auto const& item : v->get_array()) {
        auto o = as_object(item);
        if (!o) return o.error();
        auto i = to_info(**o, false);
        if (!i) return i.error();
        out.push_back(std::move(*i));
    }
    return out;
}

}  // namespace prism_e2b::wire::rest
