// The ratio rows of each scenario, computed only from sides measured in the
// same run. Targets are the (#6); meeting them is reported, never asserted.
#include "scenario.hpp"
#include "stats.hpp"

#include <algorithm>
#include <cstdio>
#include <thread>

namespace prism_e2b::bench {

namespace {

void add(scenario_report& r, std::string metric, std::string num_side, double num, std::string den_side, double den,
         std::string target = {}, double target_value = 0, bool lower_is_better = true)
{
    ratio_row row;
    row.metric = std::move(metric);
    row.numerator = std::move(num_side);
    row.denominator = std::move(den_side);
    row.num = num;
    row.den = den;
    row.target = std::move(target);
    row.target_value = target_value;
    row.lower_is_better = lower_is_better;
    r.ratios.push_back(std::move(row));
}

void latency_rows(scenario_report& r, side_report const& a, side_report const& b, std::string const& op,
                  std::string const& label)
{
    auto const* x = a.find_op(op);
    auto const* y = b.find_op(op);
    if (!x || !y || x->empty() || y->empty()) return;
    auto const sx = summarize(*x), sy = summarize(*y);
    add(r, label + " p50 latency", a.key, sx.p50, b.key, sy.p50);
    add(r, label + " p99 latency", a.key, sx.p99, b.key, sy.p99);
}

}  // namespace

void add_ratios(scenario_report& report)
{
    auto const* cpp = report.find_side("cpp");
    auto const* js = report.find_side("js");
    auto const* raw = report.find_side("raw");
    if (!cpp) return;
    if (report.scenario == "fan_out" && js) {
        auto m = [](side_report const* s, char const* k) { return s->metric(k).value_or(0); };
        add(report, "fan-out throughput (execs/s)", "cpp", m(cpp, "throughput_per_s"), "js", m(js, "throughput_per_s"),
            ">= 3", 3, false);
        add(report, "client CPU per 1000 execs (s)", "cpp", m(cpp, "cpu_seconds_per_1000"), "js",
            m(js, "cpu_seconds_per_1000"), "<= 0.2", 0.2);
        add(report, "client peak RSS (KiB)", "cpp", m(cpp, "peak_rss_kib"), "js", m(js, "peak_rss_kib"), "<= 0.2", 0.2);
        latency_rows(report, *cpp, *js, "exec", "exec");
        // Say so when the server (with the commands it spawns) saturated the
        // machine: then throughput measures the server, not the client.
        double const cores = std::max(1u, std::thread::hardware_concurrency());
        for (auto const* s : {cpp, js}) {
            double const busy = s->metric("server_cpu_cores_busy").value_or(0);
            if (busy >= 0.6 * cores) {
                char buf[200];
                std::snprintf(buf, sizeof buf,
                              "during the %s run the server and its commands kept %.2f of %.0f cores busy: "
                              "the server is the bottleneck, so throughput measures it, not the client",
                              s->key.c_str(), busy, cores);
                report.notes.emplace_back(buf);
            }
        }
        latency_rows(report, *cpp, *js, "create", "create");
    }
    if (report.scenario == "pause_resume" && js) {
        for (char const* op : {"pause_memory", "resume_memory", "pause_filesystem", "resume_filesystem"})
            latency_rows(report, *cpp, *js, op, op);
        if (cpp->metric("peak_rss_kib") && js->metric("peak_rss_kib"))
            add(report, "client peak RSS (KiB)", "cpp", *cpp->metric("peak_rss_kib"), "js", *js->metric("peak_rss_kib"),
                "<= 0.2", 0.2);
    }
    if (report.scenario == "streams") {
        if (auto const* h1 = report.find_side("cpp_http1")) {
            auto m = [](side_report const* s, char const* k) { return s->metric(k).value_or(0); };
            add(report, "client RSS per held stream (KiB)", "cpp", m(cpp, "rss_kib_per_stream"), "cpp_http1",
                m(h1, "rss_kib_per_stream"));
            add(report, "client RSS per held stream after malloc_trim (KiB)", "cpp", m(cpp, "rss_held_kib_per_stream"),
                "cpp_http1", m(h1, "rss_held_kib_per_stream"));
            add(report, "TCP connections held", "cpp", m(cpp, "connections"), "cpp_http1", m(h1, "connections"));
            latency_rows(report, *cpp, *h1, "open", "stream open");
        }
        // The goal, absolute: 10,000 streams under 64 MiB over at most 8 connections.
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "HTTP/2 held %.0f streams: client RSS grew %.1f MiB, %.1f MiB after malloc_trim (goal for "
                      "10,000: < 64 MiB) over %.0f connections (goal: <= 8)",
                      cpp->metric("streams_held").value_or(0), cpp->metric("rss_growth_kib").value_or(0) / 1024.0,
                      cpp->metric("rss_held_growth_kib").value_or(0) / 1024.0, cpp->metric("connections").value_or(0));
        report.notes.emplace_back(buf);
    }
    if (report.scenario == "redactor") {
        // The same operations with 10,000 tokens registered over 10: "no slower".
        if (auto const* many = report.find_side("cpp_10k")) {
            for (char const* op : {"exec", "error_line"}) {
                auto const* a = many->find_op(op);
                auto const* b = cpp->find_op(op);
                if (!a || !b || a->empty() || b->empty()) continue;
                auto const sa = summarize(*a), sb = summarize(*b);
                add(report, std::string(op) + " p50 (10,000 / 10 tokens)", "cpp_10k", sa.p50, "cpp", sb.p50, "<= 1.1",
                    1.1);
                add(report, std::string(op) + " mean (10,000 / 10 tokens)", "cpp_10k", sa.mean, "cpp", sb.mean,
                    "<= 1.1", 1.1);
            }
            if (many->metric("cpu_seconds") && cpp->metric("cpu_seconds"))
                add(report, "client CPU (10,000 / 10 tokens)", "cpp_10k", *many->metric("cpu_seconds"), "cpp",
                    *cpp->metric("cpu_seconds"), "<= 1.1", 1.1);
        }
    }
    if (report.scenario == "fork") {
        auto const* f = cpp->find_op("fork_to_first_exec");
        auto const* n = cpp->find_op("create_to_first_exec");
        if (f && n && !f->empty() && !n->empty()) {
            auto const sf = summarize(*f), sn = summarize(*n);
            add(report, "to first exec p50 (fork / create)", "cpp", sf.p50, "cpp", sn.p50);
            add(report, "to first exec mean (fork / create)", "cpp", sf.mean, "cpp", sn.mean);
        }
    }
    if (report.scenario == "unary_floor") {
        if (raw) {
            auto const* sdk = cpp->find_op("stat");
            auto const* flo = raw->find_op("stat");
            if (sdk && flo && !sdk->empty() && !flo->empty()) {
                auto const s = summarize(*sdk), f = summarize(*flo);
                add(report, "unary overhead p50 (SDK / raw Beast)", "cpp", s.p50, "raw", f.p50, "<= 1.3", 1.3);
                add(report, "unary overhead mean (SDK / raw Beast)", "cpp", s.mean, "raw", f.mean, "<= 1.3", 1.3);
                add(report, "unary overhead p99 (SDK / raw Beast)", "cpp", s.p99, "raw", f.p99);
            }
            if (cpp->metric("cpu_seconds") && raw->metric("cpu_seconds"))
                add(report, "client CPU for the same calls (s)", "cpp", *cpp->metric("cpu_seconds"), "raw",
                    *raw->metric("cpu_seconds"));
        }
        if (js) {
            latency_rows(report, *cpp, *js, "stat", "stat");
            if (cpp->metric("cpu_seconds") && js->metric("cpu_seconds"))
                add(report, "client CPU for the same calls (s)", "cpp", *cpp->metric("cpu_seconds"), "js",
                    *js->metric("cpu_seconds"), "<= 0.2", 0.2);
        }
    }
}

}  // namespace prism_e2b::bench
