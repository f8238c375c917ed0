// Label validation (labels become E2B metadata): lines "key\tvalue". Accepted
// labels obey the caps, and they reach the control plane intact in the create
// body the client sends.
#include <prism_e2b/e2b_sandbox.hpp>

#include "fuzz_input.hpp"
#include "wire/rest_json.hpp"

#include <boost/json/parse.hpp>

using namespace prism_e2b;
namespace rest = prism_e2b::wire::rest;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    label_map labels;
    for (auto line : fuzz::split(fuzz::as_text(data, size), '\n')) {
        auto const tab = line.find('\t');
        if (tab == std::string_view::npos) continue;
        labels[std::string(line.substr(0, tab))] = std::string(line.substr(tab + 1));
    }
    auto const ok = validate_labels(labels);
    if (!ok) {
        fuzz::require(ok.error() == errc::invalid_argument, "bad labels are invalid_argument");
        return 0;
    }
    fuzz::require(labels.size() <= label_caps::max_labels, "label count is capped");
    e2b::create_sandbox_params p;
    p.template_id = "base";
    for (auto const& [k, v] : labels) {
        fuzz::require(!k.empty() && k.size() <= label_caps::max_key_bytes && v.size() <= label_caps::max_value_bytes,
                      "label sizes are capped");
        p.metadata[k] = v;
    }
    boost::system::error_code ec;
    auto const body = boost::json::parse(rest::create_body(p), ec);
    fuzz::require(!ec && body.is_object(), "the create body is JSON");
    auto const* md = body.as_object().if_contains("metadata");
    if (labels.empty()) return 0;
    fuzz::require(md && md->is_object() && md->as_object().size() == labels.size(), "every label is sent");
    for (auto const& [k, v] : labels) {
        auto const* sent = md->as_object().if_contains(k);
        fuzz::require(sent && sent->is_string() && sent->as_string() == v, "labels are sent unchanged");
    }
    return 0;
}
