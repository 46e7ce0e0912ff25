#pragma once
// Holm's step-down procedure (S. Holm, "A simple sequentially rejective multiple test procedure",
// Scand. J. Statistics 6, 1979) over the verdicts of one sweep: every verdict that a paired
// interval decides is a two-sided test of "gap = threshold", and the family of all of them keeps
// the chance of any wrong pass or fail at α = 1 − kConfidence (docs/experiments.md, "Verdicts").
#include <cstddef>
#include <span>
#include <vector>

namespace altgrad::report {

// For m p-values, ranked j = 1 … m from the smallest (ties in input order):
//   adjusted[i] = max over ranks k ≤ j of min(1, (m − k + 1) · p_(k)), Holm's adjusted p-value;
//   level[i]    = α/(m − j + 1) up to the first rank the procedure keeps, and that rank's level for
//                 every rank after it: the level each test is decided at, so that p[i] ≤ level[i]
//                 exactly when adjusted[i] ≤ α.
struct HolmLevels {
  std::vector<double> adjusted;
  std::vector<double> level;
};
HolmLevels holm(std::span<const double> p, double alpha);

}  // namespace altgrad::report
