// The benchmark report model: per scenario, the sides measured in the same run
// (C++ SDK, official JS SDK, raw Beast floor), their latency samples and
// metrics, and the ratio rows computed from them. Written as JSON
// (schema "prism-e2b-bench/1", see write_json) and as an SVG chart.
#ifndef PRISM_E2B_BENCH_REPORT_HPP
#define PRISM_E2B_BENCH_REPORT_HPP

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace prism_e2b::bench {

/// One client measured in a scenario.
struct side_report {
    std::string key;    ///< "cpp", "js" or "raw"
    std::string label;  ///< human name, e.g. "e2b@2.49.1 (JS)"
    /// Latency samples (ms) per operation, in the order they were added.
    std::vector<std::pair<std::string, std::vector<double>>> operations;
    /// Scalar results: throughput_per_s, cpu_seconds, peak_rss_kib, ...
    std::vector<std::pair<std::string, double>> metrics;
    std::vector<std::string> notes;

    std::vector<double>& op(std::string const& name);
    std::vector<double> const* find_op(std::string const& name) const;
    void set_metric(std::string const& name, double v);
    std::optional<double> metric(std::string const& name) const;
};

/// "cpp / js" for one metric, with the target it is held to (if any).
struct ratio_row {
    std::string metric;       ///< e.g. "client CPU per exec"
    std::string numerator;    ///< side key
    std::string denominator;  ///< side key
    double num = 0, den = 0;
    std::string target;  ///< e.g. "<= 0.2"; empty: informational
    double target_value = 0;
    bool lower_is_better = true;

    double ratio() const noexcept { return den != 0 ? num / den : 0; }
    std::optional<bool> met() const noexcept;
};

struct scenario_report {
    std::string scenario;
    boost::json::object params;
    std::deque<side_report> sides;  ///< deque: references stay valid as sides are added
    std::vector<ratio_row> ratios;
    std::vector<std::string> notes;

    side_report& side(std::string const& key, std::string const& label);
    side_report const* find_side(std::string const& key) const;
};

struct run_report {
    std::string command;
    std::vector<scenario_report> scenarios;
};

/// The whole run as JSON. Per operation: count, mean, p50, p90, p99, min, max
/// (ms) and the raw samples.
boost::json::value to_json(run_report const& r);
/// Writes to_json(r) pretty-printed; false when the file cannot be written.
bool write_json(run_report const& r, std::string const& path);
/// Checks the schema produced by to_json (used by the smoke test); returns the
/// first problem, or empty when valid.
std::string check_schema(boost::json::value const& v);

/// Reads back what to_json wrote (samples, metrics, notes, ratios, params);
/// used to merge per-scenario child runs. Appends to `out`; error text or empty.
std::string append_from_json(boost::json::value const& v, run_report& out);

/// Fills a side from the JSON a bench/js script prints:
/// {"operations":{"<op>":[ms,...]}, "metrics":{"<name>":number}, "notes":[...]}.
/// Returns an error text, empty on success.
std::string side_from_js(boost::json::value const& v, side_report& out);

/// A text table of every scenario's summaries and ratios (what the CLI prints).
std::string to_text(run_report const& r);

}  // namespace prism_e2b::bench

#endif
