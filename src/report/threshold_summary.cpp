#include "report/threshold_summary.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace altgrad::report {

double ThresholdSummary::geometric_mean() const { return std::pow(10.0, log10_estimate.mean); }

std::vector<ThresholdSummary> threshold_summaries(const std::vector<Search>& searches) {
  std::vector<ThresholdSummary> summaries;
  std::set<std::string> seen;
  for (const Search& first : searches) {
    if (!seen.insert(first.group).second) continue;
    ThresholdSummary summary{first.group, first.key, {}, {}, 0, {}, 0.0};
    std::size_t searched = 0;
    std::vector<double> logs;
    for (const Search& s : searches) {
      if (s.group != first.group) continue;
      ++searched;
      if (!s.bracket) {
        ++summary.outside_range;
        continue;
      }
      const double low = std::log10(s.bracket->first), high = std::log10(s.bracket->second);
      summary.seeds.push_back(s.seed.value_or(0));
      summary.estimates.push_back(std::pow(10.0, (low + high) / 2.0));
      logs.push_back((low + high) / 2.0);
      summary.resolution_log10 = std::max(summary.resolution_log10, (high - low) / 2.0);
    }
    if (searched < 2) continue;
    summary.log10_estimate = estimate_mean(logs);
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

}  // namespace altgrad::report
