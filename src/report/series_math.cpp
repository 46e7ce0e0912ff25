#include "report/series_math.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace altgrad::report {

ChartSlot chart_slot(const std::string& key) {
  std::size_t begin = 0;
  while (begin <= key.size()) {
    const std::size_t end = std::min(key.find('/', begin), key.size());
    const std::string part = key.substr(begin, end - begin);
    if (part.find_first_of(".:") != std::string::npos) {
      return {key.substr(0, begin) + "*" + key.substr(end), part};
    }
    begin = end + 1;
  }
  return {key, ""};
}

Band mean_band(const std::vector<const Series*>& runs) {
  std::map<double, std::vector<double>> by_step;  // each step's values, in run order
  for (const Series* s : runs) {
    for (std::size_t i = 0; i < s->steps.size(); ++i) by_step[s->steps[i]].push_back(s->values[i]);
  }
  Band band;
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [step, values] : by_step) {
    const MeanEstimate e = estimate_mean(values);
    band.steps.push_back(step);
    band.mean.push_back(e.mean);
    band.lo.push_back(*std::min_element(values.begin(), values.end()));
    band.hi.push_back(*std::max_element(values.begin(), values.end()));
    band.ci_lo.push_back(e.ci_low.value_or(kNone));
    band.ci_hi.push_back(e.ci_high.value_or(kNone));
    band.count.push_back(static_cast<int>(values.size()));
  }
  return band;
}

std::vector<std::size_t> downsample_indices(const std::vector<double>& values, std::size_t max_points) {
  const std::size_t n = values.size();
  std::vector<std::size_t> kept;
  if (n <= max_points || max_points < 4) {
    for (std::size_t i = 0; i < n; ++i) kept.push_back(i);
    return kept;
  }
  const std::size_t buckets = (max_points - 2) / 2;
  kept.push_back(0);
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t begin = 1 + b * (n - 2) / buckets, end = 1 + (b + 1) * (n - 2) / buckets;
    if (begin >= end) continue;
    std::size_t lo = begin, hi = begin;
    for (std::size_t i = begin; i < end; ++i) {
      // A NaN never wins a comparison, so it is dropped unless the whole bucket is NaN.
      if (values[i] < values[lo]) lo = i;
      if (values[i] > values[hi]) hi = i;
    }
    kept.push_back(std::min(lo, hi));
    if (lo != hi) kept.push_back(std::max(lo, hi));
  }
  kept.push_back(n - 1);
  return kept;
}

double gap_percent(double value, double baseline) { return 100.0 * (value - baseline) / baseline; }

}  // namespace altgrad::report
