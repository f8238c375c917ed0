// Report model, JSON writer and schema check.
#include "report.hpp"

#include "stats.hpp"

#include <boost/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

namespace prism_e2b::bench {

namespace json = boost::json;

std::vector<double>& side_report::op(std::string const& name)
{
    for (auto& [n, v] : operations)
        if (n == name) return v;
    operations.emplace_back(name, std::vector<double>{});
    return operations.back().second;
}

std::vector<double> const* side_report::find_op(std::string const& name) const
{
    for (auto const& [n, v] : operations)
        if (n == name) return &v;
    return nullptr;
}

void side_report::set_metric(std::string const& name, double v)
{
    for (auto& [n, x] : metrics)
        if (n == name) {
            x = v;
            return;
        }
    metrics.emplace_back(name, v);
}

std::optional<double> side_report::metric(std::string const& name) const
{
    for (auto const& [n, x] : metrics)
        if (n == name) return x;
    return std::nullopt;
}

std::optional<bool> ratio_row::met() const noexcept
{
    if (target.empty() || den == 0) return std::nullopt;
    return lower_is_better ? ratio() <= target_value : ratio() >= target_value;
}

side_report& scenario_report::side(std::string const& key, std::string const& label)
{
    for (auto& s : sides)
        if (s.key == key) return s;
    sides.push_back(side_report{key, label, {}, {}, {}});
    return sides.back();
}

side_report const* scenario_report::find_side(std::string const& key) const
{
    for (auto const& s : sides)
        if (s.key == key) return &s;
    return nullptr;
}

namespace {

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

json::object summary_json(std::vector<double> const& samples)
{
    auto const s = summarize(samples);
    json::object o;
    o["unit"] = "ms";
    o["count"] = s.count;
    o["mean"] = round3(s.mean);
    o["p50"] = round3(s.p50);
    o["p90"] = round3(s.p90);
    o["p99"] = round3(s.p99);
    o["min"] = round3(s.min);
    o["max"] = round3(s.max);
    json::array a;
    a.reserve(samples.size());
    for (double x : samples) a.push_back(round3(x));
    o["samples"] = std::move(a);
    return o;
}

std::string utc_now()
{
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void pretty(std::ostream& os, json::value const& v, std::string indent = "")
{
    // Sample arrays stay on one line so the file stays readable and small.
    switch (v.kind()) {
        case json::kind::object: {
            auto const& o = v.get_object();
            if (o.empty()) {
                os << "{}";
                return;
            }
            os << "{\n";
            std::size_t i = 0;
            for (auto const& [k, x] : o) {
                os << indent << "  " << json::serialize(json::value(k)) << ": ";
                pretty(os, x, indent + "  ");
                os << (++i < o.size() ? ",\n" : "\n");
            }
            os << indent << "}";
            return;
        }
        case json::kind::array: {
            auto const& a = v.get_array();
            bool scalar = true;
            for (auto const& x : a) scalar = scalar && !x.is_structured();
            if (scalar) {
                os << json::serialize(v);
                return;
            }
            os << "[\n";
            for (std::size_t i = 0; i < a.size(); ++i) {
                os << indent << "  ";
                pretty(os, a[i], indent + "  ");
                os << (i + 1 < a.size() ? ",\n" : "\n");
            }
            os << indent << "]";
            return;
        }
        default:
            os << json::serialize(v);
    }
}

}  // namespace

json::value to_json(run_report const& r)
{
    json::object root;
    root["schema"] = "prism-e2b-bench/1";
    root["generated_at"] = utc_now();
    root["command"] = r.command;
    json::object machine;
    machine["hardware_threads"] = std::thread::hardware_concurrency();
    root["machine"] = std::move(machine);
    json::array scenarios;
    for (auto const& sc : r.scenarios) {
        json::object s;
        s["scenario"] = sc.scenario;
        s["params"] = sc.params;
        json::object sides;
        for (auto const& side : sc.sides) {
            json::object so;
            so["label"] = side.label;
            json::object ops;
            for (auto const& [name, samples] : side.operations) ops[name] = summary_json(samples);
            so["operations"] = std::move(ops);
            json::object metrics;
            for (auto const& [name, v] : side.metrics)
                metrics[name] = std::isfinite(v) ? json::value(round3(v)) : json::value(nullptr);
            so["metrics"] = std::move(metrics);
            json::array notes;
            for (auto const& n : side.notes) notes.push_back(json::value(n));
            so["notes"] = std::move(notes);
            sides[side.key] = std::move(so);
        }
        s["sides"] = std::move(sides);
        json::array ratios;
        for (auto const& row : sc.ratios) {
            json::object ro;
            ro["metric"] = row.metric;
            ro["numerator"] = row.numerator;
            ro["denominator"] = row.denominator;
            ro["num"] = round3(row.num);
            ro["den"] = round3(row.den);
            ro["ratio"] = std::round(row.ratio() * 10000.0) / 10000.0;
            ro["target"] = row.target;
            if (auto m = row.met())
                ro["met"] = *m;
            else
                ro["met"] = nullptr;
            ratios.push_back(std::move(ro));
        }
        s["ratios"] = std::move(ratios);
        json::array notes;
        for (auto const& n : sc.notes) notes.push_back(json::value(n));
        s["notes"] = std::move(notes);
        scenarios.push_back(std::move(s));
    }
    root["scenarios"] = std::move(scenarios);
    return root;
}

bool write_json(run_report const& r, std::string const& path)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    pretty(out, to_json(r));
    out << "\n";
    return static_cast<bool>(out);
}

std::string check_schema(json::value const& v)
{
    auto const* root = v.if_object();
    if (!root) return "root is not an object";
    auto const* schema = root->if_contains("schema");
    if (!schema || !schema->is_string() || schema->get_string() != "prism-e2b-bench/1")
        return "schema is not prism-e2b-bench/1";
    for (char const* k : {"generated_at", "command"})
        if (!root->if_contains(k) || !root->at(k).is_string()) return std::string("missing string ") + k;
    auto const* scs = root->if_contains("scenarios");
    if (!scs || !scs->is_array() || scs->get_array().empty()) return "scenarios missing or empty";
    for (auto const& s : scs->get_array()) {
        auto const* so = s.if_object();
        if (!so || !so->if_contains("scenario") || !so->at("scenario").is_string()) return "scenario without a name";
        std::string const name(so->at("scenario").get_string());
        auto const* sides = so->if_contains("sides");
        if (!sides || !sides->is_object() || !sides->get_object().contains("cpp")) return name + ": no cpp side";
        for (auto const& [key, side] : sides->get_object()) {
            auto const* ops = side.is_object() ? side.get_object().if_contains("operations") : nullptr;
            if (!ops || !ops->is_object() || ops->get_object().empty())
                return name + "." + std::string(key) + ": no operations";
            for (auto const& [op, summary] : ops->get_object()) {
                auto const* o = summary.if_object();
                if (!o) return name + ": operation " + std::string(op) + " is not an object";
                for (char const* f : {"count", "mean", "p50", "p90", "p99", "min", "max"})
                    if (!o->if_contains(f) || !o->at(f).is_number())
                        return name + ": operation " + std::string(op) + " lacks " + f;
                auto const* samples = o->if_contains("samples");
                if (!samples || !samples->is_array() ||
                    samples->get_array().size() != o->at("count").to_number<std::size_t>())
                    return name + ": operation " + std::string(op) + " samples do not match count";
            }
            auto const* metrics = side.get_object().if_contains("metrics");
            if (!metrics || !metrics->is_object()) return name + "." + std::string(key) + ": no metrics";
        }
        auto const* ratios = so->if_contains("ratios");
        if (!ratios || !ratios->is_array()) return name + ": no ratios array";
        for (auto const& r : ratios->get_array()) {
            auto const* ro = r.if_object();
            if (!ro || !ro->if_contains("metric") || !ro->if_contains("ratio") || !ro->at("ratio").is_number())
                return name + ": malformed ratio row";
        }
    }
    return {};
}

std::string append_from_json(json::value const& v, run_report& out)
{
    if (auto problem = check_schema(v); !problem.empty()) return problem;
    for (auto const& s : v.at("scenarios").as_array()) {
        auto const& so = s.as_object();
        scenario_report sr;
        sr.scenario = std::string(so.at("scenario").as_string());
        if (auto const* p = so.if_contains("params"); p && p->is_object()) sr.params = p->as_object();
        for (auto const& [key, side] : so.at("sides").as_object()) {
            auto const& sd = side.as_object();
            auto& out_side = sr.side(std::string(key),
                                     sd.contains("label") ? std::string(sd.at("label").as_string()) : std::string(key));
            for (auto const& [op, summary] : sd.at("operations").as_object()) {
                auto& samples = out_side.op(std::string(op));
                for (auto const& x : summary.as_object().at("samples").as_array())
                    samples.push_back(x.to_number<double>());
            }
            for (auto const& [name, m] : sd.at("metrics").as_object())
                if (m.is_number()) out_side.set_metric(std::string(name), m.to_number<double>());
            if (auto const* n = sd.if_contains("notes"); n && n->is_array())
                for (auto const& x : n->as_array())
                    if (x.is_string()) out_side.notes.emplace_back(x.as_string());
        }
        for (auto const& r : so.at("ratios").as_array()) {
            auto const& ro = r.as_object();
            ratio_row row;
            row.metric = std::string(ro.at("metric").as_string());
            row.numerator = std::string(ro.at("numerator").as_string());
            row.denominator = std::string(ro.at("denominator").as_string());
            row.num = ro.at("num").to_number<double>();
            row.den = ro.at("den").to_number<double>();
            row.target = std::string(ro.at("target").as_string());
            // Targets are written as "<= x" or ">= x".
            if (row.target.size() > 3) {
                row.lower_is_better = row.target.rfind("<=", 0) == 0;
                row.target_value = std::strtod(row.target.c_str() + 3, nullptr);
            }
            sr.ratios.push_back(std::move(row));
        }
        if (auto const* n = so.if_contains("notes"); n && n->is_array())
            for (auto const& x : n->as_array())
                if (x.is_string()) sr.notes.emplace_back(x.as_string());
        out.scenarios.push_back(std::move(sr));
    }
    return {};
}

std::string side_from_js(json::value const& v, side_report& out)
{
    auto const* o = v.if_object();
    if (!o) return "not an object";
    auto const* ops = o->if_contains("operations");
    if (!ops || !ops->is_object()) return "no operations object";
    for (auto const& [name, arr] : ops->get_object()) {
        if (!arr.is_array()) return "operation " + std::string(name) + " is not an array";
        auto& samples = out.op(std::string(name));
        for (auto const& x : arr.get_array()) {
            if (!x.is_number()) return "non-numeric sample in " + std::string(name);
            samples.push_back(x.to_number<double>());
        }
    }
    if (auto const* m = o->if_contains("metrics"); m && m->is_object())
        for (auto const& [name, x] : m->get_object())
            if (x.is_number()) out.set_metric(std::string(name), x.to_number<double>());
    if (auto const* n = o->if_contains("notes"); n && n->is_array())
        for (auto const& x : n->get_array())
            if (x.is_string()) out.notes.emplace_back(x.get_string());
    return {};
}

std::string to_text(run_report const& r)
{
    std::ostringstream os;
    char line[256];
    for (auto const& sc : r.scenarios) {
        os << "== " << sc.scenario << " ==\n";
        std::snprintf(line, sizeof line, "%-6s %-28s %6s %9s %9s %9s %9s\n", "side", "operation", "n", "mean", "p50",
                      "p90", "p99");
        os << line;
        for (auto const& side : sc.sides)
            for (auto const& [name, samples] : side.operations) {
                auto const s = summarize(samples);
                std::snprintf(line, sizeof line, "%-6s %-28s %6zu %9.3f %9.3f %9.3f %9.3f\n", side.key.c_str(),
                              name.c_str(), s.count, s.mean, s.p50, s.p90, s.p99);
                os << line;
            }
        for (auto const& side : sc.sides)
            for (auto const& [name, v] : side.metrics) {
                std::snprintf(line, sizeof line, "%-6s %-28s %.4g\n", side.key.c_str(), name.c_str(), v);
                os << line;
            }
        if (!sc.ratios.empty()) {
            std::snprintf(line, sizeof line, "%-36s %12s %12s %9s %10s %s\n", "ratio", "num", "den", "ratio", "target",
                          "met");
            os << line;
            for (auto const& row : sc.ratios) {
                auto const m = row.met();
                std::snprintf(line, sizeof line, "%-36s %12.4g %12.4g %9.3f %10s %s\n",
                              (row.metric + " (" + row.numerator + "/" + row.denominator + ")").c_str(), row.num,
                              row.den, row.ratio(), row.target.empty() ? "-" : row.target.c_str(),
                              m ? (*m ? "yes" : "NO") : "-");
                os << line;
            }
        }
        for (auto const& n : sc.notes) os << "note: " << n << "\n";
        for (auto const& side : sc.sides)
            for (auto const& n : side.notes) os << "note (" << side.key << "): " << n << "\n";
        os << "\n";
    }
    return os.str();
}

}  // namespace prism_e2b::bench
