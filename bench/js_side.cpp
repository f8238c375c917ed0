// The official JS SDK side: node runs bench/js/<script>.mjs against the same
// server; its JSON on stdout becomes side "js". The API key travels in the
// child's environment, never in argv.
#include "scenario.hpp"
#include "subprocess.hpp"

#include <boost/json/parse.hpp>

#include <filesystem>

// bench/js in the source tree (generated; cmake/path_functions.cmake).
char const* prism_e2b_bench_js_dir();

namespace prism_e2b::bench {

std::string run_js_side(std::string const& script, bench_config const& cfg, server_endpoint const& srv,
                        scenario_report& report)
{
    namespace fs = std::filesystem;
    char const* dir_env = std::getenv("PRISM_E2B_BENCH_JS_DIR");
    fs::path const dir = dir_env && *dir_env ? fs::path(dir_env) : fs::path(prism_e2b_bench_js_dir());
    if (!fs::exists(dir / "node_modules" / "e2b"))
        return "the JS SDK is not installed: run `npm ci --prefix " + dir.string() + "`";
    std::string const node = which("node");
    if (node.empty()) return "node is not on PATH";
    std::map<std::string, std::string> env{
        {"E2B_API_KEY", srv.api_key},
        {"E2B_API_URL", srv.api_url},
        {"E2B_SANDBOX_URL", srv.sandbox_url},
        {"E2B_DOMAIN", "localhost"},
        {"BENCH_N", std::to_string(cfg.n)},
        {"BENCH_SANDBOXES", std::to_string(cfg.sandboxes)},
        {"BENCH_EXECS", std::to_string(cfg.execs)},
        {"BENCH_CONCURRENCY", std::to_string(cfg.concurrency)},
        {"BENCH_MEMORY_MIB", std::to_string(cfg.memory_mib)},
        {"BENCH_QUIET", cfg.quiet ? "1" : "0"},
        {"BENCH_SERVER_PID", std::to_string(srv.server_pid)},
    };
    // The native side trusts PRISM_E2B_CA_FILE; node is told the same CA.
    if (char const* ca = std::getenv("PRISM_E2B_CA_FILE"); ca && *ca) env["NODE_EXTRA_CA_CERTS"] = ca;
    std::string err;
    auto child = child_process::spawn(node, {(dir / (script + ".mjs")).string()}, env, true, &err);
    if (!child) return err;
    std::string const out = child->read_all_stdout();
    int const rc = child->wait();
    if (rc != 0) return "node " + script + ".mjs exited with " + std::to_string(rc);
    // The last non-empty line is the result (the SDK may print warnings before).
    auto end = out.find_last_not_of("\r\n");
    if (end == std::string::npos) return "node " + script + ".mjs printed nothing";
    auto const start = out.rfind('\n', end);
    std::string const line =
        out.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);
    if (ec) return "node " + script + ".mjs printed invalid JSON: " + ec.message();
    auto& side = report.side("js", "e2b@2.49.1 (official JS SDK, node)");
    return side_from_js(v, side);
}

}  // namespace prism_e2b::bench
