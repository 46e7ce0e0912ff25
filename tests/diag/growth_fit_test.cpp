// The growth fit against values whose trend is known: a clean exponential, a level with noise, a
// constant, and too few values.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "diag/growth_fit.hpp"

namespace altgrad::diag {
namespace {

TEST(GrowthFit, ACleanExponentialHasItsSlopeAndAPerfectFit) {
  std::vector<double> y;
  for (int i = 0; i < 100; ++i) y.push_back(std::log2(3.0 * std::pow(2.0, i / 25.0)));
  const GrowthFit fit = log2_growth(y);
  EXPECT_NEAR(fit.slope, 1.0 / 25.0, 1e-12);
  EXPECT_NEAR(fit.r2, 1.0, 1e-12);
}

TEST(GrowthFit, ALevelWithNoiseExplainsLittle) {
  std::vector<double> y;
  for (int i = 0; i < 100; ++i) y.push_back((i * 7919 % 13) / 13.0);  // a deterministic wobble
  const GrowthFit fit = log2_growth(y);
  EXPECT_LT(std::fabs(fit.slope), 0.01);
  EXPECT_LT(fit.r2, 0.1);
}

TEST(GrowthFit, ConstantsAndShortWindowsFitNothing) {
  EXPECT_EQ(log2_growth(std::vector<double>(50, 2.0)).r2, 0.0);
  EXPECT_EQ(log2_growth(std::vector<double>{1.0, 2.0}).slope, 0.0);
}

}  // namespace
}  // namespace altgrad::diag
