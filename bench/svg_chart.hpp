// An SVG a person can open in a browser: per scenario, the latency
// distribution of every operation per side (box p25-p75 with the p50 line,
// whisker min-p99, every sample as a dot; log-scale axis), then the ratio table.
#ifndef PRISM_E2B_BENCH_SVG_CHART_HPP
#define PRISM_E2B_BENCH_SVG_CHART_HPP

#include "report.hpp"

#include <string>

namespace prism_e2b::bench {

std::string render_svg(run_report const& r);
/// False when the file cannot be written.
bool write_svg(run_report const& r, std::string const& path);

}  // namespace prism_e2b::bench

#endif
