// URL/query decoding of the local server, and its agreement with the client's
// encoders: any bytes decode without crashing, and what the client encodes
// (encodeURIComponent, form encoding, the doubly encoded metadata filter of
// GET /v2/sandboxes) the server decodes back to the original.
// Input: lines; "key\tvalue" lines are metadata pairs, every line is also a raw query.
#include "emulator/http_message.hpp"
#include "emulator/route_paths.hpp"
#include "fuzz_input.hpp"
#include "wire/rest_json.hpp"

#include <map>

using namespace prism_e2b;
using namespace prism_e2b::local::detail;
namespace rest = prism_e2b::wire::rest;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    auto const text = fuzz::as_text(data, size);
    e2b::list_params params;
    for (auto line : fuzz::split(text, '\n')) {
        (void)parse_query(line);
        (void)url_decode(line, false);
        fuzz::require(url_decode(rest::encode_uri_component(line), false) == line, "encodeURIComponent round-trips");
        fuzz::require(url_decode(rest::form_urlencode(line), true) == line, "form encoding round-trips");
        auto const tab = line.find('\t');
        if (tab != std::string_view::npos && tab > 0)
            params.metadata[std::string(line.substr(0, tab))] = std::string(line.substr(tab + 1));
    }
    if (params.metadata.empty()) return 0;

    // The server's reading of the metadata filter (control_plane.cpp parse_list_query).
    auto const target = rest::list_target(params);
    auto const q = target.find('?');
    fuzz::require(q != std::string::npos, "a metadata filter makes a query");
    std::map<std::string, std::string> seen;
    for (auto const& [k, v] : parse_query(std::string_view(target).substr(q + 1))) {
        if (k != "metadata") continue;
        for (auto const& [mk, mv] : parse_query(v)) seen[url_decode(mk)] = url_decode(mv);
    }
    fuzz::require(seen.size() == params.metadata.size(), "every metadata pair arrives");
    for (auto const& [k, v] : params.metadata) {
        auto it = seen.find(k);
        fuzz::require(it != seen.end() && it->second == v, "metadata pairs arrive unchanged");
    }
    return 0;
}
