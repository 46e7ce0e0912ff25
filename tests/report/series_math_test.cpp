#include "report/series_math.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace altgrad::report {
namespace {

TEST(ChartSlot, ThePointOrTensorComponentIsTheLineAndTheRestTheChart) {
  EXPECT_EQ(chart_slot("quant/h.0.mlp.c_fc:act/amax").chart, "quant/*/amax");
  EXPECT_EQ(chart_slot("quant/h.0.mlp.c_fc:act/amax").label, "h.0.mlp.c_fc:act");
  EXPECT_EQ(chart_slot("diag/kurtosis/h.0").chart, "diag/kurtosis/*");
  EXPECT_EQ(chart_slot("diag/kurtosis/lm_head:act").label, "lm_head:act");
  EXPECT_EQ(chart_slot("diag/attention_entropy/h.1.attn/per_head/0").chart, "diag/attention_entropy/*/per_head/0");
  EXPECT_EQ(chart_slot("diag/warnings/count").chart, "diag/warnings/count");
  EXPECT_EQ(chart_slot("diag/warnings/count").label, "");
  EXPECT_EQ(chart_slot("loss").chart, "loss");
  // A key the engine does not log yet lands in a chart by the same rule.
  EXPECT_EQ(chart_slot("geometry/h.3.attn/rank").chart, "geometry/*/rank");
}

TEST(MeanBand, MeanMinAndMaxOverTheRunsThatLoggedEachStep) {
  const Series a{{1, 2, 3}, {1.0, 4.0, 9.0}};
  const Series b{{1, 2}, {3.0, 2.0}};  // stopped after step 2
  const Band band = mean_band({&a, &b});
  ASSERT_EQ(band.steps, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(band.mean, (std::vector<double>{2.0, 3.0, 9.0}));
  EXPECT_EQ(band.lo, (std::vector<double>{1.0, 2.0, 9.0}));
  EXPECT_EQ(band.hi, (std::vector<double>{3.0, 4.0, 9.0}));
  EXPECT_EQ(band.count, (std::vector<int>{2, 2, 1}));
  // Two runs: mean ± t(0.975, 1 dof) · sd / √2 = mean ± 12.706 · |a − b| / 2; one run: no interval.
  EXPECT_NEAR(band.ci_lo[0], 2.0 - 12.7062047, 1e-6);
  EXPECT_NEAR(band.ci_hi[1], 3.0 + 12.7062047, 1e-6);
  EXPECT_TRUE(std::isnan(band.ci_lo[2]) && std::isnan(band.ci_hi[2]));
}

TEST(Downsample, ShortSeriesAreKeptWhole) {
  const std::vector<double> values{3, 1, 2};
  EXPECT_EQ(downsample_indices(values, 10), (std::vector<std::size_t>{0, 1, 2}));
}

TEST(Downsample, KeepsEndsAndEachBucketsExtremesWithinTheBudget) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise;
  std::vector<double> values(10007);
  for (double& v : values) v = noise(rng);
  values[4321] = 100.0;   // a spike
  values[8765] = -100.0;  // and a dip: both must survive
  const std::size_t budget = 200;
  const auto kept = downsample_indices(values, budget);
  EXPECT_LE(kept.size(), budget);
  EXPECT_GE(kept.size(), budget - 4);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  EXPECT_EQ(std::adjacent_find(kept.begin(), kept.end()), kept.end());
  EXPECT_EQ(kept.front(), 0u);
  EXPECT_EQ(kept.back(), values.size() - 1);
  EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), std::size_t{4321}));
  EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), std::size_t{8765}));
  // Brute force: every kept interior index is the min or the max of its bucket.
  const std::size_t buckets = (budget - 2) / 2, n = values.size();
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t begin = 1 + b * (n - 2) / buckets, end = 1 + (b + 1) * (n - 2) / buckets;
    const auto lo = std::min_element(values.begin() + begin, values.begin() + end) - values.begin();
    const auto hi = std::max_element(values.begin() + begin, values.begin() + end) - values.begin();
    EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), static_cast<std::size_t>(lo))) << "bucket " << b;
    EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), static_cast<std::size_t>(hi))) << "bucket " << b;
  }
}

TEST(GapPercent, IsTheRelativeDifferenceToTheBaseline) {
  EXPECT_DOUBLE_EQ(gap_percent(4.5, 4.0), 12.5);
  EXPECT_DOUBLE_EQ(gap_percent(3.0, 4.0), -25.0);
}

}  // namespace
}  // namespace altgrad::report
