// Thresholds over seeds from hand-made searches whose midpoints are whole or half decades, so that
// every expected value below is worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "report/threshold_summary.hpp"

namespace altgrad::report {
namespace {

Search bracketed(const std::string& group, std::int64_t seed, double stable, double diverged) {
  Search s;
  s.kind = "lr_threshold";
  s.group = group;
  s.seed = seed;
  s.key = "learning_rate";
  s.bracket = std::make_pair(stable, diverged);
  return s;
}

// A search without a bracket, after the given probes (value, diverged).
Search unbracketed(const std::string& group, std::int64_t seed, std::vector<Probe> probes) {
  Search s = bracketed(group, seed, 1.0, 2.0);
  s.bracket.reset();
  s.probes = std::move(probes);
  return s;
}

TEST(ThresholdSummary, GeometricMeanOfTheMidpointsWithATIntervalOnLog10) {
  // Midpoints 10^-2.5, 10^-1.5 and 10^-2: log10 mean -2, sd 0.5; t(0.975, 2) = 4.302652729911275.
  const auto summaries = threshold_summaries({bracketed("a", 1, 1e-3, 1e-2), bracketed("a", 2, 1e-2, 1e-1),
                                              bracketed("a", 3, 1e-3, 1e-1)});
  ASSERT_EQ(summaries.size(), 1u);
  const ThresholdSummary& t = summaries[0];
  EXPECT_EQ(t.seeds, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_NEAR(t.estimates[0], std::pow(10.0, -2.5), 1e-15);
  EXPECT_NEAR(t.geometric_mean(), 1e-2, 1e-15);
  EXPECT_NEAR(t.log10_estimate.sd, 0.5, 1e-14);
  const double half = 4.302652729911275 * 0.5 / std::sqrt(3.0);
  ASSERT_TRUE(t.log10_estimate.ci_low);
  EXPECT_NEAR(*t.log10_estimate.ci_low, -2.0 - half, 1e-9);
  EXPECT_NEAR(*t.log10_estimate.ci_high, -2.0 + half, 1e-9);
  EXPECT_NEAR(t.resolution_log10, 1.0, 1e-14);  // the widest bracket spans two decades
  EXPECT_EQ(t.outside_range, 0u);
}

TEST(ThresholdSummary, OneSeedIsNoSummaryAndARangeEndGivesNoEstimate) {
  // Seed 2 diverged at the low end, seed 3 was stable at the high end: both ended outside the range.
  // Seed 4 has only its first probe, stable: still running, so unfinished, not outside the range.
  const auto summaries = threshold_summaries(
      {bracketed("single", 1, 1e-3, 1e-2), bracketed("edge", 1, 1e-3, 1e-2),
       unbracketed("edge", 2, {{1e-3, "", true, ""}}),
       unbracketed("edge", 3, {{1e-3, "", false, ""}, {1.0, "", false, ""}}),
       unbracketed("edge", 4, {{1e-3, "", false, ""}})});
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].group, "edge");
  EXPECT_EQ(summaries[0].outside_range, 2u);
  EXPECT_EQ(summaries[0].unfinished, 1u);
  EXPECT_EQ(summaries[0].log10_estimate.n, 1u);
  EXPECT_FALSE(summaries[0].log10_estimate.ci_low);
}

}  // namespace
}  // namespace altgrad::report
