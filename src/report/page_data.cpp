#include "report/page_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/forest_plot.hpp"
#include "report/group_table.hpp"
#include "report/series_math.hpp"
#include "report/tables.hpp"
#include "report/threshold_summary.hpp"
#include "report/verdict_correction.hpp"

namespace altgrad::report {
namespace {

using nlohmann::json;

// 4 significant digits: enough to read a chart, a third of the bytes of a full double.
json rounded(double value) {
  if (!std::isfinite(value)) return nullptr;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return std::strtod(buffer, nullptr);
}

json optional(const std::optional<double>& value) { return value ? rounded(*value) : json(nullptr); }

bool is_curve(const std::string& key) { return key.find('/') == std::string::npos; }

std::vector<const Series*> group_series(const Report& report, const GroupSummary& group, const std::string& key) {
  std::vector<const Series*> found;
  for (std::size_t i : group.runs) {
    const auto it = report.runs[i].series.find(key);
    if (it != report.runs[i].series.end()) found.push_back(&it->second);
  }
  return found;
}

// {x, mean, lo, hi, ci_lo, ci_hi} of the group's seeds, downsampled on the mean.
json band_json(const Band& band, std::size_t max_points) {
  json x = json::array(), mean = json::array(), lo = json::array(), hi = json::array();
  json ci_lo = json::array(), ci_hi = json::array();
  for (std::size_t i : downsample_indices(band.mean, max_points)) {
    x.push_back(band.steps[i]);
    mean.push_back(rounded(band.mean[i]));
    lo.push_back(rounded(band.lo[i]));
    hi.push_back(rounded(band.hi[i]));
    ci_lo.push_back(rounded(band.ci_lo[i]));
    ci_hi.push_back(rounded(band.ci_hi[i]));
  }
  return {{"x", x}, {"mean", mean}, {"lo", lo}, {"hi", hi}, {"ci_lo", ci_lo}, {"ci_hi", ci_hi}};
}

// The lines of one chart for one group on a shared step grid (the union of their steps; NaN where
// a line has no sample), so the page stores the steps once per chart.
struct ChartGrid {
  std::vector<double> steps;
  std::map<std::string, std::vector<double>> lines;
};

ChartGrid on_grid(const std::map<std::string, Band>& bands) {
  std::map<double, std::size_t> position;
  for (const auto& [label, band] : bands) {
    for (double step : band.steps) position.emplace(step, 0);
  }
  ChartGrid grid;
  for (auto& [step, index] : position) {
    index = grid.steps.size();
    grid.steps.push_back(step);
  }
  for (const auto& [label, band] : bands) {
    auto& line = grid.lines[label];
    line.assign(grid.steps.size(), std::numeric_limits<double>::quiet_NaN());
    for (std::size_t i = 0; i < band.steps.size(); ++i) line[position[band.steps[i]]] = band.mean[i];
  }
  return grid;
}

// The samples every line of a chart keeps: the downsampling rule applied to the largest and to the
// smallest value over the lines at each step (half the budget each), so the extremes of the chart
// (the spikes that cross a warning threshold, the dips of an entropy collapse) survive.
std::vector<std::size_t> shared_samples(const ChartGrid& grid, std::size_t max_points) {
  const std::size_t n = grid.steps.size();
  std::vector<double> top(n, -std::numeric_limits<double>::infinity()), bottom(n, std::numeric_limits<double>::infinity());
  for (const auto& [label, line] : grid.lines) {
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isnan(line[i])) continue;
      top[i] = std::max(top[i], line[i]);
      bottom[i] = std::min(bottom[i], line[i]);
    }
  }
  if (n <= max_points) return downsample_indices(top, n);
  auto kept = downsample_indices(top, max_points / 2);
  const auto low = downsample_indices(bottom, max_points / 2);
  kept.insert(kept.end(), low.begin(), low.end());
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  return kept;
}

json chart_json(const std::map<std::string, Band>& bands) {
  const ChartGrid grid = on_grid(bands);
  const auto kept = shared_samples(grid, kDiagnosticPoints);
  json x = json::array(), lines = json::object();
  for (std::size_t i : kept) x.push_back(grid.steps[i]);
  for (const auto& [label, line] : grid.lines) {
    json y = json::array();
    for (std::size_t i : kept) y.push_back(rounded(line[i]));
    lines[label] = y;
  }
  return {{"x", x}, {"lines", lines}};
}

// curves: {key: {group: band}}; charts: {chart: {group: {x, lines: {label: y}}}}.
void add_series(const Report& report, json& data) {
  json curves = json::object();
  std::map<std::string, std::map<std::string, std::map<std::string, Band>>> charts;  // chart, group, label
  for (const std::string& key : metric_keys(report)) {
    const ChartSlot slot = chart_slot(key);
    for (const GroupSummary& group : report.groups) {
      const auto runs = group_series(report, group, key);
      if (runs.empty()) continue;
      if (is_curve(key)) {
        curves[key][group.name] = band_json(mean_band(runs), kCurvePoints);
      } else {
        charts[slot.chart][group.name][slot.label] = mean_band(runs);
      }
    }
  }
  json chart_data = json::object();
  for (const auto& [chart, groups] : charts) {
    for (const auto& [group, bands] : groups) chart_data[chart][group] = chart_json(bands);
  }
  data["curves"] = curves;
  data["charts"] = chart_data;
  // phases: {group: [steps]}, the precision schedule's switches, marked on the curves.
  json phases = json::object();
  for (const GroupSummary& group : report.groups) {
    std::set<std::int64_t> steps;
    for (const std::size_t r : group.runs) steps.insert(report.runs[r].phase_switches.begin(), report.runs[r].phase_switches.end());
    if (!steps.empty()) phases[group.name] = steps;
  }
  data["phases"] = phases;
}

// The log2 histograms (weights, value profiles) of each group's first run that has them.
void add_histograms(const Report& report, json& data) {
  json hists = json::object();
  for (const GroupSummary& group : report.groups) {
    for (std::size_t i : group.runs) {
      if (report.runs[i].histograms.empty()) continue;
      for (const auto& [key, h] : report.runs[i].histograms) {
        json steps = json::array(), counts = json::array();
        const std::size_t n = h.steps.size(), keep = std::min(n, kHistogramSteps);
        for (std::size_t k = 0; k < keep; ++k) {
          const std::size_t row = keep == 1 ? n - 1 : k * (n - 1) / (keep - 1);
          steps.push_back(h.steps[row]);
          counts.push_back(h.counts[row]);
        }
        hists[group.name][chart_slot(key).label.empty() ? key : chart_slot(key).label] =
            {{"lo", h.lo}, {"steps", steps}, {"counts", counts}, {"run", report.runs[i].name}};
      }
      break;
    }
  }
  data["hists"] = hists;
}

// Parallel coordinates: every top-level metric's final value, then each per-point or per-tensor
// chart summarized over its lines: the largest final value of a quantization statistic (the worst
// point: overflow, underflow, ...) and the mean final value of a geometry diagnostic
// (stiffness_entropy, update_underflow, ... averaged over the weight tensors). One line per run.
struct LineSummary {
  std::string_view prefix;  // the charts it applies to, "<prefix>*/<name>" with a plain name
  std::string_view label;   // the axis is "<label> <name>"
  bool mean;                // mean over the lines, else the largest
};
constexpr LineSummary kLineSummaries[] = {{"quant/", "max", false}, {"diag/geometry/", "mean", true}};

std::optional<LineSummary> line_summary(const std::string& chart) {
  for (const LineSummary& s : kLineSummaries) {
    if (chart.rfind(std::string(s.prefix) + "*/", 0) != 0) continue;
    const std::string name = chart.substr(s.prefix.size() + 2);
    if (!name.empty() && name.find('/') == std::string::npos) return s;  // not a histogram's bins
  }
  return std::nullopt;
}

std::optional<double> summarize_lines(const RunData& run, const std::string& chart, bool mean) {
  std::optional<double> result;
  std::size_t lines = 0;
  for (const auto& [key, series] : run.series) {
    if (chart_slot(key).chart != chart || series.values.empty()) continue;
    const double v = series.values.back();
    result = !result ? v : mean ? *result + v : std::max(*result, v);
    ++lines;
  }
  if (result && mean) *result /= static_cast<double>(lines);
  return result;
}

void add_finals(const Report& report, json& data) {
  std::vector<std::string> curve_keys;
  std::vector<std::pair<std::string, LineSummary>> summarized;  // chart and its rule
  std::map<std::string, bool> seen;
  for (const std::string& key : metric_keys(report)) {
    if (is_curve(key)) curve_keys.push_back(key);
    const std::string chart = chart_slot(key).chart;
    if (const auto rule = line_summary(chart); rule && !seen[chart]) {
      seen[chart] = true;
      summarized.emplace_back(chart, *rule);
    }
  }
  json dims = json::array(), rows = json::array();
  for (const auto& k : curve_keys) dims.push_back(k);
  // The cost of the result, where some run reached its target_loss.
  const bool targets = std::any_of(report.runs.begin(), report.runs.end(),
                                   [](const RunData& r) { return r.cost && r.cost->reached; });
  if (targets) dims.insert(dims.end(), {"tokens to target", "seconds to target"});
  // "quant/*/overflow_pct" -> "max overflow_pct": the axis names stay readable.
  for (const auto& [chart, rule] : summarized) dims.push_back(std::string(rule.label) + " " + chart.substr(chart.rfind('/') + 1));
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    const RunData& run = report.runs[i];
    json values = json::array();
    for (const auto& k : curve_keys) values.push_back(optional(run.final_value(k)));
    if (targets) {
      values.push_back(run.cost ? optional(run.cost->tokens) : json());
      values.push_back(run.cost ? optional(run.cost->seconds) : json());
    }
    for (const auto& [chart, rule] : summarized) values.push_back(optional(summarize_lines(run, chart, rule.mean)));
    rows.push_back({{"run", run.name}, {"group", report.index.runs[i].group}, {"values", values}});
  }
  data["finals"] = {{"dims", dims}, {"rows", rows}};
}

// The group table's cells (group_table.hpp), its doubles rounded as every number of the page is.
void add_group_table(const Report& report, json& data) {
  json columns = json::array(), rows = json::array(), groups = json::array();
  for (const GroupColumn& c : group_columns()) columns.push_back(c.header);
  for (const auto& cells : group_rows(report)) {
    json row = json::array();
    for (const json& cell : cells) row.push_back(cell.is_number_float() ? rounded(cell.get<double>()) : cell);
    rows.push_back(row);
  }
  for (const GroupSummary& g : report.groups) groups.push_back({{"name", g.name}});
  data["group_table"] = {{"columns", columns}, {"rows", rows}};
  data["groups"] = groups;
}

// Rows of the forest plot (forest_plot.hpp), rounded as the group table's cells, so that a row and
// its group's cells read the same numbers.
void add_forest(const Report& report, json& data) {
  json rows = json::array();
  for (const ForestRow& row : forest_rows(report)) {
    const MeanEstimate& e = row.gap->gap_pct;
    json verdicts = json::array();
    for (const std::size_t v : row.verdicts) {
      const VerdictRow& verdict = report.verdicts[v];
      verdicts.push_back({{"criterion", criterion_name(report.index.criteria[verdict.criterion])},
                          {"verdict", verdict_name(verdict.judgement.verdict)}});
    }
    // The interval the colour's verdict was decided on, where the sweep's correction decided it.
    const std::optional<Correction>& c = report.verdicts[row.coloured_by].correction;
    rows.push_back({{"group", row.group}, {"baseline", row.baseline}, {"gap", e.n ? rounded(e.mean) : json()},
                    {"low", optional(e.ci_low)}, {"high", optional(e.ci_high)}, {"seeds", e.n},
                    {"verdict", verdict_name(row.colour)}, {"verdicts", verdicts},
                    {"corrected_low", c ? rounded(c->ci_low) : json()}, {"corrected_high", c ? rounded(c->ci_high) : json()},
                    {"corrected_level", c ? json(c->level) : json()}});
  }
  data["forest"] = {{"thresholds", forest_thresholds(report)}, {"rows", rows}};
}

void add_start_up(const Report& report, json& data) {
  json events = json::array();
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    for (const StartUpEvent& e : report.runs[i].start_up) {
      events.push_back({{"run", report.runs[i].name}, {"group", report.index.runs[i].group}, {"step", e.step},
                        {"kind", e.kind}, {"point", e.point}, {"statistic", e.statistic}, {"value", rounded(e.value)},
                        {"message", e.message}});
    }
  }
  data["start_up"] = events;
}

void add_tables(const Report& report, json& data) {
  json runs = json::array(), events = json::array(), searches = json::array();
  add_group_table(report, data);
  add_forest(report, data);
  add_start_up(report, data);
  json verdicts = json::array();
  for (const VerdictRow& v : report.verdicts) {
    const Criterion& c = report.index.criteria[v.criterion];
    verdicts.push_back({{"criterion", criterion_name(c)}, {"group", v.group}, {"verdict", verdict_name(v.judgement.verdict)},
                        {"alone", verdict_name(v.uncorrected.verdict)}, {"why", v.judgement.why},
                        {"sign_test", sign_test_words(v.gap)}, {"seeds", seeds_words(v)}, {"reading", reading(v.gap)}});
  }
  data["verdicts"] = verdicts;
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    const RunData& run = report.runs[i];
    const std::string& group = report.index.runs[i].group;
    json first = nullptr;
    if (!run.warnings.empty()) {
      first = {{"step", run.warnings.front().step}, {"kind", run.warnings.front().kind}, {"where", run.warnings.front().where}};
    }
    runs.push_back({{"name", run.name}, {"group", group}, {"seed", report.index.runs[i].seed}, {"status", run.status},
                    {"diverged", run.diverged()}, {"last_step", run.last_step},
                    {"val_loss", optional(run.final_value("val_loss"))}, {"first_warning", first},
                    {"warnings", run.warnings.size()}});
    for (const Warning& w : run.warnings) {
      events.push_back({{"run", run.name}, {"group", group}, {"step", w.step}, {"kind", w.kind}, {"where", w.where},
                        {"value", rounded(w.value)}, {"threshold", rounded(w.threshold)}, {"message", w.message}});
    }
    if (run.stop_step) {
      events.push_back({{"run", run.name}, {"group", group}, {"step", *run.stop_step}, {"kind", "stop"},
                        {"where", ""}, {"value", nullptr}, {"threshold", nullptr}, {"message", run.status}});
    }
  }
  for (const Search& s : report.index.searches) {
    json probes = json::array();
    for (const Probe& p : s.probes) {
      probes.push_back({{"value", p.value}, {"run", p.run}, {"diverged", p.diverged}, {"reason", p.reason}});
    }
    searches.push_back({{"kind", s.kind}, {"group", s.group}, {"seed", s.seed ? json(*s.seed) : json(nullptr)}, {"key", s.key},
                        {"bracket", s.bracket ? json::array({s.bracket->first, s.bracket->second}) : json(nullptr)},
                        {"probes", probes}});
  }
  // The range fit ranking of each group's first profiled run (tables.cpp's "Range fit").
  json range_fit = json::array();
  for (const GroupSummary& g : report.groups) {
    for (const std::size_t r : g.runs) {
      const auto fits = report.runs[r].range_fit_ranking();
      if (fits.empty()) continue;
      json rows = json::array();
      for (const RunData::PointFit& f : fits) rows.push_back({f.point, f.overflow_pct, f.flush_pct, f.subnormal_pct});
      range_fit.push_back({{"group", g.name}, {"run", report.runs[r].name}, {"format", report.runs[r].range_fit_format},
                           {"rows", rows}});
      break;
    }
  }
  data["range_fit"] = range_fit;
  data["runs"] = runs;
  data["events"] = events;
  data["searches"] = searches;
  json thresholds = json::array();
  for (const ThresholdSummary& t : threshold_summaries(report.index.searches)) {
    const MeanEstimate& e = t.log10_estimate;
    const auto power = [](std::optional<double> x) { return x ? json(std::pow(10.0, *x)) : json(nullptr); };
    thresholds.push_back({{"group", t.group}, {"key", t.key}, {"seeds", e.n},
                          {"threshold", e.n ? json(t.geometric_mean()) : json(nullptr)},
                          {"interval", json::array({power(e.ci_low), power(e.ci_high)})},
                          {"resolution", e.n ? json(std::pow(10.0, t.resolution_log10)) : json(nullptr)},
                          {"outside_range", t.outside_range}, {"unfinished", t.unfinished}});
  }
  data["thresholds"] = thresholds;
}

}  // namespace

json page_data(const Report& report) {
  json data = {{"title", report.dir.string()}, {"single_run", report.index.single_run}};
  add_tables(report, data);
  add_series(report, data);
  add_histograms(report, data);
  add_finals(report, data);
  return data;
}

}  // namespace altgrad::report
