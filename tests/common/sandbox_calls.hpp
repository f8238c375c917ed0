// One-call shortcuts on a local_server_fixture's sandboxes, over the raw wire:
// a sandbox's info, a control-plane POST, the headers that run a command as
// root, and the exit code of a run_command.
#ifndef PRISM_E2B_TESTS_COMMON_SANDBOX_CALLS_HPP
#define PRISM_E2B_TESTS_COMMON_SANDBOX_CALLS_HPP

#include "local_server_fixture.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace prism_e2b::test {

/// Extra headers for run_command / a Start stream that run the process as root.
inline header_pairs as_root() { return {{"Authorization", "Basic cm9vdDo="}}; }  // base64("root:")

/// GET /sandboxes/<id>: the sandbox's info (throws unless the answer is a JSON object).
inline boost::json::object sandbox_info(local_server_fixture& f, sandbox_ref const& sb)
{
    raw_http c(f.port());
    return c.request("GET", "/sandboxes/" + sb.id, {}, api_headers(f)).json().as_object();
}

/// A control-plane POST (e.g. "/sandboxes/<id>/pause") with the API key; its status.
inline int api_post(local_server_fixture& f, std::string const& path, std::string body)
{
    raw_http c(f.port());
    return c.request("POST", path, std::move(body), api_headers(f)).status;
}

/// The run's exit code; -999 when it never ended.
inline std::int64_t exit_code(run_result const& r)
{
    if (!r.end) return -999;
    auto const* code = r.end->if_contains("exitCode");
    return code ? code->to_number<std::int64_t>() : 0;  // proto3 JSON leaves out a zero
}

}  // namespace prism_e2b::test

#endif
