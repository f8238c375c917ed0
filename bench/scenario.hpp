// What every scenario gets: its parameters and the server to talk to.
#ifndef PRISM_E2B_BENCH_SCENARIO_HPP
#define PRISM_E2B_BENCH_SCENARIO_HPP

#include <prism_e2b/e2b/client_options.hpp>

#include "report.hpp"

#include <cstddef>
#include <cstdlib>
#include <string>

namespace prism_e2b::bench {

struct bench_config {
    std::size_t n = 50;            ///< pause/resume cycles; unary calls are n * 20
    std::size_t sandboxes = 50;    ///< fan-out
    std::size_t execs = 1000;      ///< fan-out
    std::size_t concurrency = 8;   ///< fan-out max_concurrent_execs per sandbox
    std::size_t memory_mib = 64;   ///< pause/resume: memory held by the sandbox's process
    std::size_t streams = 400;     ///< streams: long-running processes held open at once
    std::size_t open_at_once = 0;  ///< streams: the caller's own bound on concurrent opens; 0: all at once
    unsigned threads = 1;          ///< io_context threads of the C++ side
    bool js = false;
    bool quiet = false;
};

/// The server under test (a prism-e2b-local subprocess in every benchmark run).
struct server_endpoint {
    std::string api_url;
    std::string sandbox_url;
    std::string api_key;  ///< secret: passed to node in the environment only
    int server_pid = 0;   ///< the prism-e2b-local subprocess
};

/// A native client's options for `srv` (its key, API and envd URLs), built like every
/// prism-e2b command's: PRISM_E2B_CA_FILE is trusted too (a TLS server of a test CA).
inline e2b::client_options client_options_for(server_endpoint const& srv)
{
    e2b::client_options o;
    o.api_key = srv.api_key;
    o.api_url = srv.api_url;
    o.sandbox_url = srv.sandbox_url;
    if (char const* ca = std::getenv("PRISM_E2B_CA_FILE"); ca && *ca) o.ca_file = ca;
    return o;
}

/// The timing proxy and the raw floor speak plain HTTP/1.1: over TLS they are left out.
inline bool plain_http(server_endpoint const& srv) { return srv.api_url.rfind("http://", 0) == 0; }

/// The C++ side of each scenario; each fills report.side("cpp", ...) (and, for
/// unary_floor, "raw"). Errors are returned as text (empty: ok).
std::string run_pause_resume(bench_config const& cfg, server_endpoint const& srv, scenario_report& report);
std::string run_fan_out(bench_config const& cfg, server_endpoint const& srv, scenario_report& report);
std::string run_unary_floor(bench_config const& cfg, server_endpoint const& srv, scenario_report& report);
/// Sides "cpp" (HTTP/2) and "cpp_http1": cfg.streams processes held open at once.
std::string run_streams(bench_config const& cfg, server_endpoint const& srv, scenario_report& report);
/// Side "cpp": fork (count 1) to the first command's end, against create to it, alternating.
std::string run_fork(bench_config const& cfg, server_endpoint const& srv, scenario_report& report);
/// Sides "cpp" (10 envd tokens registered) and "cpp_10k" (10,000).
std::string run_redactor(bench_config const& cfg, server_endpoint const& srv, scenario_report& report);

/// Runs bench/js/<script>.mjs with node against `srv`, merging its output as
/// side "js". Errors as text.
std::string run_js_side(std::string const& script, bench_config const& cfg, server_endpoint const& srv,
                        scenario_report& report);

/// Adds the C++/JS (and SDK/raw) ratio rows from the sides present.
void add_ratios(scenario_report& report);

}  // namespace prism_e2b::bench

#endif
