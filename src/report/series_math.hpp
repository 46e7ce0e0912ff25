#pragma once
// The arithmetic of the report: which chart a metrics key belongs to, the mean and min-max band of
// a group's seeds, and the downsampling that keeps long series small on the page.
#include <cstddef>
#include <string>
#include <vector>

#include "report/run_data.hpp"
#include "report/statistics.hpp"

namespace altgrad::report {

// A key's chart and its line in that chart. The naming rule: the first path component that names a
// tensor or quantization point (it holds '.' or ':') is the line's label, and the key with that
// component replaced by '*' is the chart: "quant/h.0.mlp.c_fc:act/amax" is line "h.0.mlp.c_fc:act"
// of chart "quant/*/amax". A key with no such component is a chart of one unlabelled line
// ("loss", "diag/warnings/count"). New metrics keys land in charts by the same rule.
struct ChartSlot {
  std::string chart;
  std::string label;
};
ChartSlot chart_slot(const std::string& key);

// Mean, min and max over runs at each step any of them logged (a run that stopped early leaves the
// later steps to the others), and the mean's 95% interval (statistics.hpp; NaN where fewer than two
// runs logged the step); `count` is how many runs logged that step.
struct Band {
  std::vector<double> steps, mean, lo, hi, ci_lo, ci_hi;
  std::vector<int> count;
};
Band mean_band(const std::vector<const Series*>& runs);

// Indices of at most about `max_points` samples of `values` that keep its shape: the first and last
// sample, and in each of max_points / 2 equal-width buckets of the index range the sample with the
// smallest and the one with the largest value, in order. Returns all indices when the series fits.
std::vector<std::size_t> downsample_indices(const std::vector<double>& values, std::size_t max_points);

// Relative gap of `value` to `baseline` in percent: 100 (value - baseline) / baseline.
double gap_percent(double value, double baseline);

}  // namespace altgrad::report
