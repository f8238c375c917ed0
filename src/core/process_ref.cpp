// Process refs: "prism-e2b-proc:" + base64url(JSON record), and the command
// fingerprint they carry. Decoding is strict and canonical: a ref is accepted
// only if encoding the decoded record gives back exactly the same text, so
// there is one spelling per record (no whitespace, reordering, duplicates or
// escapes smuggled in).
#include <prism_e2b/process_ref.hpp>

#include "protocol/base64.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <limits>
#include <new>
#include <openssl/evp.h>

namespace prism_e2b {
namespace json = boost::json;
namespace {

constexpr std::size_t max_sandbox_id_length = 128;
constexpr std::size_t max_workspace_length = 1024;
constexpr std::size_t fingerprint_length = 64;

bool valid_sandbox_id(std::string_view id) noexcept
{
    if (id.empty() || id.size() > max_sandbox_id_length) return false;
    for (char c : id) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                  c == '.';
        if (!ok) return false;
    }
    return true;
}

bool valid_fingerprint(std::string_view fp) noexcept
{
    if (fp.size() != fingerprint_length) return false;
    for (char c : fp)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

bool valid_workspace(std::string_view ws) noexcept
{
    return !ws.empty() && ws.size() <= max_workspace_length && ws.front() == '/' &&
           ws.find('\0') == std::string_view::npos;
}

// Returns the string at `key`, or nullptr when missing or not a string.
json::string const* string_field(json::object const& o, std::string_view key) noexcept
{
    auto const* v = o.if_contains(key);
    return v ? v->if_string() : nullptr;
}

std::optional<process_ref_record> decode_record(std::string_view ref)
{
    if (ref.size() > max_process_ref_length || !ref.starts_with(process_ref_prefix)) return std::nullopt;
    auto payload = detail::base64url_decode(ref.substr(process_ref_prefix.size()));
    if (!payload || payload->empty()) return std::nullopt;

    // Bounded parse: the input is at most ~1.5 KiB, depth 1 is all a record needs.
    std::array<unsigned char, 4096> buffer;
    json::monotonic_resource resource(buffer.data(), buffer.size());
    json::parse_options opts;
    opts.max_depth = 1;
    boost::system::error_code ec;
    json::value v = json::parse(*payload, ec, &resource, opts);
    if (ec) return std::nullopt;
    auto const* obj = v.if_object();
    if (!obj || obj->size() != 5) return std::nullopt;

    auto const* version = obj->if_contains("v");
    if (!version || !version->is_int64() || version->get_int64() != 1) return std::nullopt;

    auto const* pid = obj->if_contains("pid");
    std::uint64_t pid_value = 0;
    if (pid && pid->is_int64() && pid->get_int64() > 0)
        pid_value = static_cast<std::uint64_t>(pid->get_int64());
    else if (pid && pid->is_uint64())
        pid_value = pid->get_uint64();
    if (pid_value == 0 || pid_value > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;

    auto const* sandbox = string_field(*obj, "sandbox");
    auto const* fp = string_field(*obj, "fp");
    auto const* ws = string_field(*obj, "ws");
    if (!sandbox || !fp || !ws) return std::nullopt;
    if (!valid_sandbox_id(*sandbox) || !valid_fingerprint(*fp) || !valid_workspace(*ws)) return std::nullopt;

    process_ref_record record{std::string(*sandbox), static_cast<std::uint32_t>(pid_value), std::string(*fp),
                              std::string(*ws)};
    if (encode_process_ref(record) != ref) return std::nullopt;  // not the canonical spelling
    return record;
}

}  // namespace

std::string command_fingerprint(std::string_view file, std::vector<std::string> const& args)
{
    json::array argv;
    argv.reserve(args.size() + 1);
    argv.emplace_back(json::string_view(file.data(), file.size()));
    for (auto const& a : args) argv.emplace_back(json::string_view(a.data(), a.size()));
    std::string const text = json::serialize(argv);

    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int md_len = 0;
    if (EVP_Digest(text.data(), text.size(), md.data(), &md_len, EVP_sha256(), nullptr) != 1)
        throw std::bad_alloc();  // EVP_Digest of an in-memory buffer fails only when out of memory

    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(md_len * 2);
    for (unsigned int i = 0; i < md_len; ++i) {
        out += hex[md[i] >> 4];
        out += hex[md[i] & 0xf];
    }
    return out;
}

std::string encode_process_ref(process_ref_record const& record)
{
    // Key order is part of the canonical form decode_process_ref() checks.
    json::object o;
    o.reserve(5);
    o.emplace("v", 1);
    o.emplace("sandbox", json::string_view(record.sandbox_id.data(), record.sandbox_id.size()));
    o.emplace("pid", record.pid);
    o.emplace("fp", json::string_view(record.command_fingerprint.data(), record.command_fingerprint.size()));
    o.emplace("ws", json::string_view(record.workspace.data(), record.workspace.size()));
    return std::string(process_ref_prefix) + detail::base64url_encode(json::serialize(o));
}

std::optional<process_ref_record> decode_process_ref(std::string_view ref) noexcept
{
    try {
        return decode_record(ref);
    } catch (std::bad_alloc const&) {
        // The only exception the bounded decoder can meet.
        return std::nullopt;
    }
}

}  // namespace prism_e2b
