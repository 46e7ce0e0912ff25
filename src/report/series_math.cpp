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
  struct Sum {
    double total = 0.0, lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
    int count = 0;
  };
  std::map<double, Sum> by_step;
  for (const Series* s : runs) {
    for (std::size_t i = 0; i < s->steps.size(); ++i) {
      Sum& sum = by_step[s->steps[i]];
      sum.total += s->values[i];
      sum.lo = std::min(sum.lo, s->values[i]);
      sum.hi = std::max(sum.hi, s->values[i]);
      ++sum.count;
    }
  }
  Band band;
  for (const auto& [step, sum] : by_step) {
    band.steps.push_back(step);
    band.mean.push_back(sum.total / sum.count);
    band.lo.push_back(sum.lo);
    band.hi.push_back(sum.hi);
    band.count.push_back(sum.count);
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
