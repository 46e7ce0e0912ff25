#include "report/threshold_summary.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace altgrad::report {

namespace {

// The bisection's first probe is the range's low end and its second the high end
// (sweep/lr_bisection.hpp): the search ends there when the low end diverges or the high end does not.
bool ended_at_a_range_end(const Search& s) {
  return (!s.probes.empty() && s.probes[0].diverged) || (s.probes.size() >= 2 && !s.probes[1].diverged);
}

}  // namespace

double ThresholdSummary::geometric_mean() const { return std::pow(10.0, log10_estimate.mean); }

std::vector<ThresholdSummary> threshold_summaries(const std::vector<Search>& searches) {
  std::vector<ThresholdSummary> summaries;
  std::set<std::string> seen;
  for (const Search& first : searches) {
    if (!seen.insert(first.group).second) continue;
    ThresholdSummary summary{first.group, first.key, {}, {}, 0, 0, {}, 0.0};
    std::size_t searched = 0;
    std::vector<double> logs;
    for (const Search& s : searches) {
      if (s.group != first.group) continue;
      ++searched;
      if (!s.bracket) {
        ++(ended_at_a_range_end(s) ? summary.outside_range : summary.unfinished);
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
