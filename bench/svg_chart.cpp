// SVG rendering of a run_report; hand-written markup, no dependencies.
#include "svg_chart.hpp"

#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace prism_e2b::bench {

namespace {

constexpr double width = 1100;
constexpr double label_w = 300;
constexpr double plot_x0 = label_w + 10;
constexpr double plot_x1 = width - 30;
constexpr double row_h = 22;

std::string esc(std::string const& s)
{
    std::string o;
    for (char c : s) {
        switch (c) {
            case '&':
                o += "&amp;";
                break;
            case '<':
                o += "&lt;";
                break;
            case '>':
                o += "&gt;";
                break;
            case '"':
                o += "&quot;";
                break;
            default:
                o += c;
        }
    }
    return o;
}

char const* color_of(std::string const& key)
{
    if (key == "cpp") return "#1f77b4";
    if (key == "js") return "#ff7f0e";
    if (key == "raw") return "#2ca02c";
    return "#7f7f7f";
}

std::string fmt(char const* f, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

struct log_axis {
    double lo, hi;
    double x(double v) const
    {
        v = std::clamp(v, lo, hi);
        return plot_x0 + (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) * (plot_x1 - plot_x0);
    }
};

}  // namespace

std::string render_svg(run_report const& r)
{
    std::ostringstream body;
    double y = 40;
    body << "<text x='10' y='24' font-size='16' font-weight='bold'>prism-e2b benchmarks</text>\n";
    body << "<text x='10' y='" << y - 2 << "' font-size='11' fill='#555'>" << esc(r.command) << "</text>\n";
    y += 20;
    for (auto const& sc : r.scenarios) {
        // Axis range over every sample of the scenario, padded to whole decades.
        double lo = 1e300, hi = 0;
        std::vector<std::string> ops;
        for (auto const& side : sc.sides)
            for (auto const& [name, samples] : side.operations) {
                if (std::find(ops.begin(), ops.end(), name) == ops.end()) ops.push_back(name);
                for (double v : samples)
                    if (v > 0) {
                        lo = std::min(lo, v);
                        hi = std::max(hi, v);
                    }
            }
        if (hi <= 0) {
            lo = 0.01;
            hi = 1;
        }
        log_axis ax{std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi)))};
        if (ax.hi <= ax.lo) ax.hi = ax.lo * 10;

        body << "<text x='10' y='" << y + 14 << "' font-size='15' font-weight='bold'>" << esc(sc.scenario)
             << "</text>\n";
        y += 24;
        // Legend.
        double lx = 10;
        for (auto const& side : sc.sides) {
            body << "<rect x='" << lx << "' y='" << y << "' width='12' height='12' fill='" << color_of(side.key)
                 << "'/><text x='" << lx + 16 << "' y='" << y + 10 << "' font-size='12'>" << esc(side.label)
                 << "</text>\n";
            lx += 24 + 7.0 * static_cast<double>(side.label.size());
        }
        y += 22;
        double const plot_top = y;
        for (auto const& op : ops) {
            for (auto const& side : sc.sides) {
                auto const* samples = side.find_op(op);
                if (!samples || samples->empty()) continue;
                std::vector<double> sorted = *samples;
                std::sort(sorted.begin(), sorted.end());
                auto const s = summarize(sorted);
                double const cy = y + row_h / 2;
                char const* col = color_of(side.key);
                body << "<text x='" << label_w << "' y='" << cy + 4 << "' font-size='12' text-anchor='end'>" << esc(op)
                     << " · " << esc(side.key) << " (p50 " << fmt("%.3g", s.p50) << " ms)</text>\n";
                // Dots: deterministic jitter so the file is reproducible.
                std::size_t i = 0;
                std::size_t const step = std::max<std::size_t>(1, sorted.size() / 150);
                for (double v : *samples) {
                    if (i++ % step) continue;
                    double const jitter = (static_cast<double>((i * 2654435761u) % 1000) / 1000.0 - 0.5) * (row_h - 8);
                    body << "<circle cx='" << fmt("%.1f", ax.x(std::max(v, ax.lo))) << "' cy='"
                         << fmt("%.1f", cy + jitter) << "' r='1.6' fill='" << col << "' fill-opacity='0.35'/>";
                }
                body << "\n";
                double const p25 = percentile(sorted, 25), p75 = percentile(sorted, 75);
                body << "<line x1='" << fmt("%.1f", ax.x(s.min)) << "' x2='" << fmt("%.1f", ax.x(s.p99)) << "' y1='"
                     << cy << "' y2='" << cy << "' stroke='" << col << "'/>";
                body << "<rect x='" << fmt("%.1f", ax.x(p25)) << "' y='" << cy - 6 << "' width='"
                     << fmt("%.1f", std::max(1.0, ax.x(p75) - ax.x(p25))) << "' height='12' fill='" << col
                     << "' fill-opacity='0.25' stroke='" << col << "'/>";
                body << "<line x1='" << fmt("%.1f", ax.x(s.p50)) << "' x2='" << fmt("%.1f", ax.x(s.p50)) << "' y1='"
                     << cy - 7 << "' y2='" << cy + 7 << "' stroke='" << col << "' stroke-width='2.5'/>";
                body << "<line x1='" << fmt("%.1f", ax.x(s.p99)) << "' x2='" << fmt("%.1f", ax.x(s.p99)) << "' y1='"
                     << cy - 4 << "' y2='" << cy + 4 << "' stroke='" << col << "'/>\n";
                y += row_h;
            }
            y += 4;
        }
        // Decade grid and labels.
        for (double d = ax.lo; d <= ax.hi * 1.0001; d *= 10) {
            double const x = ax.x(d);
            body << "<line x1='" << x << "' x2='" << x << "' y1='" << plot_top - 4 << "' y2='" << y
                 << "' stroke='#ccc' stroke-dasharray='3,3'/><text x='" << x << "' y='" << y + 14
                 << "' font-size='11' text-anchor='middle'>" << fmt("%g", d) << " ms</text>\n";
        }
        y += 30;
        if (!sc.ratios.empty()) {
            body << "<text x='10' y='" << y << "' font-size='13' font-weight='bold'>ratios</text>\n";
            y += 18;
            double const cols[] = {10, 360, 480, 600, 700, 820};
            char const* heads[] = {"metric", "numerator", "denominator", "ratio", "target", "met"};
            for (int c = 0; c < 6; ++c)
                body << "<text x='" << cols[c] << "' y='" << y << "' font-size='12' font-weight='bold'>" << heads[c]
                     << "</text>";
            body << "\n";
            y += 16;
            for (auto const& row : sc.ratios) {
                auto const m = row.met();
                char const* fill = !m ? "#333" : (*m ? "#1a7f37" : "#cf222e");
                body << "<text x='" << cols[0] << "' y='" << y << "' font-size='12'>"
                     << esc(row.metric + " (" + row.numerator + "/" + row.denominator + ")") << "</text>"
                     << "<text x='" << cols[1] << "' y='" << y << "' font-size='12'>" << fmt("%.4g", row.num)
                     << "</text><text x='" << cols[2] << "' y='" << y << "' font-size='12'>" << fmt("%.4g", row.den)
                     << "</text><text x='" << cols[3] << "' y='" << y << "' font-size='12' font-weight='bold'>"
                     << fmt("%.3f", row.ratio()) << "</text><text x='" << cols[4] << "' y='" << y << "' font-size='12'>"
                     << esc(row.target.empty() ? "-" : row.target) << "</text><text x='" << cols[5] << "' y='" << y
                     << "' font-size='12' fill='" << fill << "'>" << (!m ? "-" : (*m ? "yes" : "no")) << "</text>\n";
                y += 16;
            }
        }
        for (auto const& n : sc.notes) {
            body << "<text x='10' y='" << y + 4 << "' font-size='11' fill='#555'>note: " << esc(n) << "</text>\n";
            y += 15;
        }
        y += 30;
    }
    std::ostringstream svg;
    svg << "<?xml version='1.0' encoding='UTF-8'?>\n<svg xmlns='http://www.w3.org/2000/svg' width='" << width
        << "' height='" << y << "' viewBox='0 0 " << width << " " << y
        << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n"
        << body.str() << "</svg>\n";
    return svg.str();
}

bool write_svg(run_report const& r, std::string const& path)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << render_svg(r);
    return static_cast<bool>(out);
}

}  // namespace prism_e2b::bench
