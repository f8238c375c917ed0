// Control-plane REST bodies (e2b-spec/openapi.yml, wire-notes.md): request
// bodies and queries exactly as the official SDK sends them, and the Sandbox /
// SandboxDetail / ListedSandbox answers.
#ifndef PRISM_E2B_WIRE_REST_JSON_HPP
#define PRISM_E2B_WIRE_REST_JSON_HPP

#include <prism_e2b/e2b/types.hpp>
#include <prism_e2b/error.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::wire::rest {

/// JavaScript encodeURIComponent (UTF-8 bytes, upper-case hex).
std::string encode_uri_component(std::string_view s);
/// application/x-www-form-urlencoded serialisation of one name or value (URLSearchParams).
std::string form_urlencode(std::string_view s);

/// Appends "?name=value" (or "&name=value" once `target` has a query), the value encoded.
void append_query(std::string& target, std::string_view name, std::string_view value);

/// Which create path a body is for: v1 (NewSandbox) or v2 (NewSandboxV2, which has no `secure`).
enum class create_api { v1, v2 };
/// POST /sandboxes or /v2/sandboxes body.
std::string create_body(e2b::create_sandbox_params const& p, create_api api = create_api::v1);
/// {"timeout":<s>}: connect and set-timeout bodies.
std::string timeout_body(std::chrono::seconds timeout);
/// {"memory":<bool>}.
std::string pause_body(bool memory);
/// "/v2/sandboxes?..." with metadata, state, limit, nextToken, template, startedAfter and order as the SDK encodes
/// them.
std::string list_target(e2b::list_params const& p);

/// The Sandbox schema (create, connect). Registers the access token with the redactor.
result<e2b::sandbox_handle> parse_sandbox(std::string_view body);
/// SandboxDetail (get info). Registers the access token with the redactor.
result<e2b::sandbox_info> parse_sandbox_detail(std::string_view body);
/// An array of ListedSandbox.
result<std::vector<e2b::sandbox_info>> parse_sandbox_list(std::string_view body);

}  // namespace prism_e2b::wire::rest

#endif
