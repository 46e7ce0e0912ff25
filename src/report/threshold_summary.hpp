#pragma once
// A group's stability threshold over its seeds (docs/experiments.md, "Thresholds over seeds"). Each
// seed's search brackets that seed's threshold between its largest stable probe s and its smallest
// diverged probe d; the seed's estimate is the bracket's midpoint on the log scale the bisection
// works on, √(s·d). Over seeds: the mean of log10 of the estimates with its Student t interval
// (statistics.hpp), reported back as 10^x, the geometric mean and its interval. The interval is
// the seeds' spread; each estimate is also off its seed's threshold by up to half its bracket's
// width, which `resolution_log10` reports so that a reader can see which of the two dominates.
// A search still running counts once it has a bracket (its two ends), with the wider resolution
// of its bracket so far.
#include <cstdint>
#include <string>
#include <vector>

#include "report/index_reader.hpp"
#include "report/statistics.hpp"

namespace altgrad::report {

struct ThresholdSummary {
  std::string group;
  std::string key;
  std::vector<std::int64_t> seeds;  // the seeds with a bracket, in the order of the index
  std::vector<double> estimates;    // √(s·d) of each of them
  std::size_t outside_range = 0;    // searches that ended at an end of the range: no estimate
  std::size_t unfinished = 0;       // searches with no bracket yet (still running, or a probe failed)
  MeanEstimate log10_estimate;      // over `estimates`, in log10
  double resolution_log10 = 0.0;    // half the widest bracket, in log10: how far an estimate may be off its seed's threshold

  double geometric_mean() const;
};

// One summary per group, in the order of its first search; only groups searched at two or more
// seeds (one seed has no spread to estimate).
std::vector<ThresholdSummary> threshold_summaries(const std::vector<Search>& searches);

}  // namespace altgrad::report
