// The benchmark driver: parses arguments, starts prism-e2b-local as a
// subprocess (so getrusage measures the client alone), runs the scenarios
// (C++ side, then the JS side when --js), adds ratios, prints the table and
// writes the JSON and SVG.
#include "driver.hpp"

#include "report.hpp"
#include "scenario.hpp"
#include "subprocess.hpp"
#include "svg_chart.hpp"

#include <boost/json/parse.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <unistd.h>

#ifdef PRISM_E2B_HAVE_BENCH_LOCAL_BIN
// The server in this build tree (generated; cmake/path_functions.cmake).
char const* prism_e2b_bench_local_bin();
#else
static char const* prism_e2b_bench_local_bin() { return ""; }
#endif

namespace prism_e2b::bench {

std::string usage()
{
    return "usage: prism-e2b bench <pause_resume|fan_out|unary_floor|redactor|streams|fork|all> [options]\n"
           "  --n N             pause/resume cycles (default 50); unary calls are N*40 per side\n"
           "  --execs N         fan-out execs (default 1000)\n"
           "  --sandboxes N     fan-out sandboxes (default 50)\n"
           "  --concurrency N   fan-out max_concurrent_execs per sandbox (default 8)\n"
           "  --memory-mib N    pause/resume: memory held by the sandbox's process (default 64)\n"
           "  --streams N       streams: long-running processes held open at once (default 400)\n"
           "  --open-at-once N  streams: the caller opens at most N at a time (default 0: all at once)\n"
           "  --threads N       io_context threads of the C++ side (default 1, like node)\n"
           "  --js              also run the official JS SDK (bench/js, needs `npm ci --prefix bench/js`)\n"
           "  --json FILE       write the report as JSON (schema prism-e2b-bench/1)\n"
           "  --svg FILE        write the latency chart and ratio table as SVG\n"
           "  --server-bin P    prism-e2b-local to start (default: next to this program)\n"
           "  --quiet           no progress bar\n"
           "  --smoke           tiny sizes for the smoke test (also shrinks fan-out)\n"
           "  --check JSON SVG  validate a report and its chart, then exit\n";
}

namespace {

std::string random_hex(std::size_t bytes)
{
    std::random_device rd;
    std::string out;
    char const* digits = "0123456789abcdef";
    for (std::size_t i = 0; i < bytes; ++i) {
        unsigned const b = rd() & 0xffu;
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}

int check_files(std::string const& json_path, std::string const& svg_path)
{
    std::ifstream in(json_path);
    if (!in) {
        std::cerr << "check: cannot read " << json_path << "\n";
        return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    boost::system::error_code ec;
    auto v = boost::json::parse(ss.str(), ec);
    if (ec) {
        std::cerr << "check: invalid JSON: " << ec.message() << "\n";
        return 1;
    }
    if (auto problem = check_schema(v); !problem.empty()) {
        std::cerr << "check: schema: " << problem << "\n";
        return 1;
    }
    std::ifstream svg(svg_path);
    std::stringstream s2;
    s2 << svg.rdbuf();
    std::string const text = s2.str();
    if (text.find("<svg") == std::string::npos || text.find("</svg>") == std::string::npos) {
        std::cerr << "check: " << svg_path << " is not an SVG document\n";
        return 1;
    }
    std::cout << "check: ok (" << v.at("scenarios").as_array().size() << " scenario(s))\n";
    return 0;
}

bool parse_size(char const* s, std::size_t& out)
{
    char* end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (!s || !*s || *end) return false;
    out = static_cast<std::size_t>(v);
    return true;
}

/// `all`: each scenario in its own child process (this program again), so
/// every peak RSS (ru_maxrss, a lifetime peak) belongs to one scenario; the
/// children's JSON reports are merged.
int run_all(std::string const& command, std::vector<std::string> const& passthrough, std::string const& json_out,
            std::string const& svg_out)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string const self = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec) {
        std::cerr << "bench all: cannot find this program: " << ec.message() << "\n";
        return 1;
    }
    run_report run;
    run.command = command;
    int rc = 0;
    for (char const* name : {"fan_out", "pause_resume", "unary_floor", "redactor", "streams", "fork"}) {
        std::string const tmp =
            (fs::temp_directory_path() / ("prism-e2b-bench-" + std::to_string(::getpid()) + "-" + name + ".json"))
                .string();
        std::vector<std::string> args{name};
        args.insert(args.end(), passthrough.begin(), passthrough.end());
        args.insert(args.end(), {"--json", tmp});
        std::string err;
        auto child = child_process::spawn(self, args, {}, true, &err);
        if (!child) {
            std::cerr << "bench all: " << err << "\n";
            return 1;
        }
        (void)child->read_all_stdout();  // the merged table is printed below
        int const crc = child->wait();
        if (crc != 0) rc = 1;
        std::ifstream in(tmp);
        std::stringstream ss;
        ss << in.rdbuf();
        fs::remove(tmp, ec);
        boost::system::error_code jec;
        auto v = boost::json::parse(ss.str(), jec);
        std::string const problem = jec ? "no report (exit " + std::to_string(crc) + ")" : append_from_json(v, run);
        if (!problem.empty()) {
            std::cerr << "bench all: " << name << ": " << problem << "\n";
            rc = 1;
        }
    }
    std::cout << "command: " << run.command << "\n\n" << to_text(run);
    if (!json_out.empty() && !write_json(run, json_out)) {
        std::cerr << "bench: cannot write " << json_out << "\n";
        rc = 1;
    }
    if (!svg_out.empty() && !write_svg(run, svg_out)) {
        std::cerr << "bench: cannot write " << svg_out << "\n";
        rc = 1;
    }
    return rc;
}

}  // namespace

int run_cli(std::string scenario, int argc, char** argv)
{
    bench_config cfg;
    std::string json_out, svg_out, server_bin;
    bool smoke = false;
    std::ostringstream cmd;
    cmd << "prism-e2b bench " << scenario;
    std::vector<std::string> passthrough;  // for the per-scenario children of `all`
    int i = 0;
    if (scenario.empty()) {
        if (argc < 1) {
            std::cerr << usage();
            return 2;
        }
        scenario = argv[0];
        if (scenario == "--check" && argc >= 3) return check_files(argv[1], argv[2]);
        cmd << scenario;
        i = 1;
    }
    for (; i < argc; ++i) {
        std::string const a = argv[i];
        auto next = [&](std::size_t& v) {
            if (i + 1 >= argc || !parse_size(argv[i + 1], v)) return false;
            cmd << " " << a << " " << argv[++i];
            return true;
        };
        auto next_str = [&](std::string& v) {
            if (i + 1 >= argc) return false;
            v = argv[++i];
            cmd << " " << a << " " << v;
            return true;
        };
        std::size_t threads = 0;
        bool ok = true;
        // Everything but the output files is passed on to the children of `all`.
        if (a != "--json" && a != "--svg") {
            passthrough.push_back(a);
            if (a != "--js" && a != "--quiet" && a != "--smoke" && i + 1 < argc) passthrough.push_back(argv[i + 1]);
        }
        if (a == "--n")
            ok = next(cfg.n);
        else if (a == "--execs")
            ok = next(cfg.execs);
        else if (a == "--sandboxes")
            ok = next(cfg.sandboxes);
        else if (a == "--concurrency")
            ok = next(cfg.concurrency);
        else if (a == "--memory-mib")
            ok = next(cfg.memory_mib);
        else if (a == "--streams")
            ok = next(cfg.streams) && cfg.streams >= 1;
        else if (a == "--open-at-once")
            ok = next(cfg.open_at_once);
        else if (a == "--threads") {
            ok = next(threads) && threads >= 1;
            cfg.threads = static_cast<unsigned>(threads);
        } else if (a == "--json")
            ok = next_str(json_out);
        else if (a == "--svg")
            ok = next_str(svg_out);
        else if (a == "--server-bin")
            ok = next_str(server_bin);
        else if (a == "--js") {
            cfg.js = true;
            cmd << " --js";
        } else if (a == "--quiet")
            cfg.quiet = true;
        else if (a == "--smoke") {
            smoke = true;
            cmd << " --smoke";
        } else if (a == "--check") {
            if (i + 2 >= argc) {
                std::cerr << usage();
                return 2;
            }
            return check_files(argv[i + 1], argv[i + 2]);
        } else if (a == "--help" || a == "-h") {
            std::cout << usage();
            return 0;
        } else
            ok = false;
        if (!ok) {
            std::cerr << "bench: bad argument " << a << "\n" << usage();
            return 2;
        }
    }
    if (smoke) {
        cfg.sandboxes = std::min<std::size_t>(cfg.sandboxes, 3);
        cfg.execs = std::min<std::size_t>(cfg.execs, 12);
        cfg.concurrency = std::min<std::size_t>(cfg.concurrency, 2);
        cfg.memory_mib = std::min<std::size_t>(cfg.memory_mib, 4);
        cfg.streams = std::min<std::size_t>(cfg.streams, 20);
    }
    if (scenario == "all") return run_all(cmd.str(), passthrough, json_out, svg_out);
    std::vector<std::string> scenarios;
    if (scenario == "pause_resume" || scenario == "fan_out" || scenario == "unary_floor" || scenario == "redactor" ||
        scenario == "streams" || scenario == "fork")
        scenarios = {scenario};
    else {
        std::cerr << "bench: unknown scenario '" << scenario << "'\n" << usage();
        return 2;
    }
    if (cfg.concurrency < 1 || cfg.concurrency > 8 || cfg.sandboxes < 1 || cfg.n < 1) {
        std::cerr << "bench: --concurrency must be 1..8, --sandboxes and --n at least 1\n";
        return 2;
    }

    // The server under test, in its own process.
    if (server_bin.empty()) server_bin = find_sibling_executable("prism-e2b-local", prism_e2b_bench_local_bin());
    if (server_bin.empty()) {
        std::cerr << "bench: prism-e2b-local not found (build target prism_e2b_local or pass --server-bin)\n";
        return 1;
    }
    server_endpoint srv;
    srv.api_key = "e2b_bench_" + random_hex(16);
    std::string err;
    // The key travels in the environment, never in argv.
    auto server =
        child_process::spawn(server_bin, {"--listen", "127.0.0.1:0"}, {{"E2B_API_KEY", srv.api_key}}, true, &err);
    if (!server) {
        std::cerr << "bench: " << err << "\n";
        return 1;
    }
    // First stdout lines: E2B_API_URL=... and E2B_SANDBOX_URL=...
    for (int l = 0; l < 2; ++l) {
        std::string const line = server->read_line();
        if (line.rfind("E2B_API_URL=", 0) == 0)
            srv.api_url = line.substr(12);
        else if (line.rfind("E2B_SANDBOX_URL=", 0) == 0)
            srv.sandbox_url = line.substr(16);
    }
    if (srv.api_url.empty()) {
        std::cerr << "bench: prism-e2b-local did not print E2B_API_URL\n";
        return 1;
    }
    if (srv.sandbox_url.empty()) srv.sandbox_url = srv.api_url;
    srv.server_pid = server->pid();

    run_report run;
    run.command = cmd.str();
    int rc = 0;
    for (auto const& name : scenarios) {
        scenario_report sr;
        sr.scenario = name;
        std::string e = name == "pause_resume" ? run_pause_resume(cfg, srv, sr)
                        : name == "fan_out"    ? run_fan_out(cfg, srv, sr)
                        : name == "redactor"   ? run_redactor(cfg, srv, sr)
                        : name == "streams"    ? run_streams(cfg, srv, sr)
                        : name == "fork"       ? run_fork(cfg, srv, sr)
                                               : run_unary_floor(cfg, srv, sr);
        add_ratios(sr);
        if (!e.empty()) {
            std::cerr << "bench " << name << ": " << e << "\n";
            sr.notes.push_back("FAILED: " + e);
            rc = 1;
        }
        run.scenarios.push_back(std::move(sr));
    }
    server->terminate();
    std::cout << "command: " << run.command << "\n\n" << to_text(run);
    if (!json_out.empty() && !write_json(run, json_out)) {
        std::cerr << "bench: cannot write " << json_out << "\n";
        rc = 1;
    }
    if (!svg_out.empty() && !write_svg(run, svg_out)) {
        std::cerr << "bench: cannot write " << svg_out << "\n";
        rc = 1;
    }
    return rc;
}

}  // namespace prism_e2b::bench
