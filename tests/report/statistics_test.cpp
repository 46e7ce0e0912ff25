// Student's t against two independent references: the density integrated numerically (Simpson's
// rule in long double, from the density's textbook formula) and the published two-sided 95%
// critical values (any statistics table, to three decimals). Means and intervals against the
// formulas evaluated directly.
#include "report/statistics.hpp"

#include "report/multiple_comparisons.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace altgrad::report {
namespace {

// ∫_{−t}^{t} of Γ((ν+1)/2) / (√(νπ) Γ(ν/2)) · (1 + x²/ν)^(−(ν+1)/2) dx by Simpson's rule.
long double integrated_central_probability(long double t, int dof) {
  const long double nu = dof;
  const long double norm = std::exp(std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2)) / std::sqrt(nu * std::numbers::pi_v<long double>);
  const auto density = [&](long double x) { return norm * std::pow(1 + x * x / nu, -(nu + 1) / 2); };
  constexpr int kIntervals = 20000;  // even
  const long double h = 2 * t / kIntervals;
  long double sum = density(-t) + density(t);
  for (int i = 1; i < kIntervals; ++i) sum += density(-t + i * h) * (i % 2 ? 4 : 2);
  return sum * h / 3;
}

TEST(StudentT, CentralProbabilityEqualsTheIntegratedDensity) {
  for (const int dof : {1, 2, 3, 4, 5, 6, 7, 10, 29, 30, 100}) {
    for (const double t : {0.1, 0.5, 1.0, 2.0, 3.0, 12.0}) {
      EXPECT_NEAR(t_central_probability(t, dof), static_cast<double>(integrated_central_probability(t, dof)), 1e-9)
          << "t " << t << " dof " << dof;
    }
  }
}

TEST(StudentT, CriticalValuesMatchThePublishedTable) {
  const std::vector<std::pair<int, double>> table = {{1, 12.706}, {2, 4.303}, {3, 3.182}, {4, 2.776},  {5, 2.571},
                                                     {9, 2.262},  {10, 2.228}, {20, 2.086}, {30, 2.042}, {120, 1.980}};
  for (const auto& [dof, t] : table) EXPECT_NEAR(t_critical(0.95, dof), t, 5e-4) << "dof " << dof;
  EXPECT_NEAR(t_critical(0.95, 100000), 1.95996, 1e-4);  // the normal limit
  EXPECT_NEAR(t_central_probability(t_critical(0.95, 7), 7), 0.95, 1e-14);
}

TEST(MeanEstimate, SampleStandardDeviationAndStudentInterval) {
  const std::vector<double> x = {1.0, 2.0, 4.0};
  const MeanEstimate e = estimate_mean(x);
  EXPECT_EQ(e.n, 3u);
  EXPECT_DOUBLE_EQ(e.mean, 7.0 / 3.0);
  const double sd = std::sqrt(((1 - 7.0 / 3) * (1 - 7.0 / 3) + (2 - 7.0 / 3) * (2 - 7.0 / 3) + (4 - 7.0 / 3) * (4 - 7.0 / 3)) / 2);
  EXPECT_NEAR(e.sd, sd, 1e-15);
  EXPECT_NEAR(*e.ci_high - e.mean, 4.303 * sd / std::sqrt(3.0), 1e-3);
  EXPECT_NEAR(e.mean - *e.ci_low, *e.ci_high - e.mean, 1e-15);
  EXPECT_FALSE(e.resolved());  // [−1.46, 6.13]
  EXPECT_TRUE(estimate_mean(std::vector<double>{1.0, 1.1, 1.2}).resolved());  // [0.85, 1.35]
}

TEST(MeanEstimate, OneValueHasNoIntervalAndEqualValuesAZeroWidthOne) {
  const MeanEstimate one = estimate_mean(std::vector<double>{3.0});
  EXPECT_EQ(one.n, 1u);
  EXPECT_FALSE(one.ci_low);
  EXPECT_FALSE(one.resolved());
  const MeanEstimate same = estimate_mean(std::vector<double>{2.0, 2.0, 2.0});
  EXPECT_EQ(same.sd, 0.0);
  EXPECT_EQ(*same.ci_low, 2.0);
  EXPECT_EQ(*same.ci_high, 2.0);
  EXPECT_TRUE(same.resolved());
  EXPECT_FALSE(estimate_mean(std::vector<double>{0.0, 0.0}).resolved());  // zero difference: no sign to resolve
  EXPECT_EQ(estimate_mean(std::vector<double>{}).n, 0u);
}

TEST(PairedGap, PairsBySeedAndNamesTheUnpairedRuns) {
  const std::vector<SeedValue> group = {{1, 2.02, "g1"}, {2, 2.10, "g2"}, {3, 1.98, "g3"}, {9, 5.0, "g9"}};
  const std::vector<SeedValue> base = {{3, 2.00, "b3"}, {1, 2.00, "b1"}, {2, 2.00, "b2"}, {4, 1.0, "b4"}};
  const PairedGap gap = paired_gap(group, base);
  EXPECT_EQ(gap.gap_pct.n, 3u);
  EXPECT_NEAR(gap.gap_pct.mean, (1.0 + 5.0 - 1.0) / 3, 1e-12);
  EXPECT_EQ(gap.same_sign, 2u);
  EXPECT_EQ(gap.unpaired, (std::vector<std::string>{"g9", "b4"}));
  EXPECT_FALSE(gap.gap_pct.resolved());
  EXPECT_EQ(describe(gap).rfind("paired +1.67% [", 0), 0u) << describe(gap);
  EXPECT_NE(describe(gap).find("2 of 3 seeds agree: not resolved with 3 seeds (unpaired: g9 b4)"), std::string::npos)
      << describe(gap);
  EXPECT_EQ(reading(gap), "not resolved with 3 seeds (unpaired: g9 b4)");
  EXPECT_EQ(reading(paired_gap({{1, 2.02, "g1"}}, {{1, 2.00, "b1"}})), "1 paired seed: no interval");
}

// Binomial tails counted by hand: 3 of 3 is 2 · 1/8; 2 of 3 is 2 · 4/8, capped at 1; 9 of 10 is
// 2 · (10 + 1)/1024; 0 of 4 positive is 4 of 4 negative, 2 · 1/16.
TEST(SignTest, ExactTwoSidedBinomialTails) {
  constexpr double kTolerance = 1e-14;  // the tails are summed through lgamma
  EXPECT_NEAR(sign_test_p(3, 3), 0.25, kTolerance);
  EXPECT_NEAR(sign_test_p(2, 3), 1.0, kTolerance);
  EXPECT_NEAR(sign_test_p(5, 5), 0.0625, kTolerance);
  EXPECT_NEAR(sign_test_p(9, 10), 22.0 / 1024.0, kTolerance);
  EXPECT_NEAR(sign_test_p(0, 4), 0.125, kTolerance);
  EXPECT_EQ(sign_test_p(0, 0), 1.0);
}

// Holm (1979) worked by hand on p = (0.01, 0.04, 0.03, 0.005), α = 0.05: sorted, 0.005 ≤ 0.05/4
// and 0.01 ≤ 0.05/3 are rejected, 0.03 > 0.05/2 stops the procedure (so 0.04 is kept although it is
// below 0.05/1). Adjusted: 4·0.005 = 0.02, max(0.02, 3·0.01) = 0.03, max(0.03, 2·0.03) = 0.06, 0.06.
TEST(Holm, StepDownLevelsAndAdjustedPValues) {
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
  const HolmLevels h = holm(p, 0.05);
  const std::vector<double> adjusted = {0.03, 0.06, 0.06, 0.02};
  const std::vector<double> level = {0.05 / 3, 0.05 / 2, 0.05 / 2, 0.05 / 4};
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_NEAR(h.adjusted[i], adjusted[i], 1e-15) << i;
    EXPECT_DOUBLE_EQ(h.level[i], level[i]) << i;
    EXPECT_EQ(p[i] <= h.level[i], h.adjusted[i] <= 0.05) << i;  // the two readings agree
  }
  // One test alone is decided at α itself.
  EXPECT_DOUBLE_EQ(holm(std::vector<double>{0.03}, 0.05).level[0], 0.05);
}

// t quantiles from the published table: t_{0.975, 9} = 2.262, t_{0.80, 9} = 0.883 give
// (2.262 + 0.883) / √10 = 0.9946 ≤ 1; t_{0.975, 8} = 2.306, t_{0.80, 8} = 0.889 give 1.065 > 1.
TEST(SeedsForPower, TheFewestSeedsWhoseIntervalResolvesTheDistance) {
  EXPECT_EQ(seeds_for_power(1.0, 1.0, 0.05, 0.8), std::optional<std::size_t>(10));
  EXPECT_EQ(seeds_for_power(1.0, -1.0, 0.05, 0.8), std::optional<std::size_t>(10));  // the side does not matter
  EXPECT_EQ(seeds_for_power(1.0, 0.0, 0.05, 0.8), std::nullopt);
  EXPECT_EQ(seeds_for_power(1.0, 0.01, 0.05, 0.8, 100), std::nullopt);
}

}  // namespace
}  // namespace altgrad::report
