// The geometry of a step counted exactly on a constructed E4M3 case: which intended updates
// underflow S/2, which codes changed and by how many grid steps, misalignment, capacity, the
// alignment cosine and the stiffness histogram's entropy, each worked out by hand below.
#include "diag/grid_geometry.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "format/parse.hpp"

namespace {

using namespace altgrad;

TEST(GridGeometry, ACountedCaseOnTheE4M3Grid) {
  const optim::WeightGrid grid{format::make_format(format::parse_format("e4m3"))};
  // E4M3 steps: 2^-4 in [0.5, 1), 2^-3 in [1, 2), 2^-2 in [2, 4); the subnormal step 2^-9.
  const std::vector<float> before = {1.0f, 1.0f, 1.0f, -0.5f, 0.0f, 3.0f};
  const std::vector<float> intended = {0.05f, 0.2f, -0.07f, 1.5f, 0.0f, 0.1f};
  const std::vector<float> after = {1.0f, 1.25f, 0.9375f, 1.0f, 0.0f, 3.1f};
  std::vector<float> grad(before.size());
  for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = -intended[i] + 0.01f * static_cast<float>(i);
  const diag::GridGeometry g = diag::grid_geometry(grid, before, after, intended, grad);

  EXPECT_EQ(g.count, 6u);
  // |Δw| < S/2: 0.05 < 0.0625, 0 < 2^-10, 0.1 < 0.125; not 0.2, 0.07 (≥ 0.0625) or 1.5.
  EXPECT_DOUBLE_EQ(g.update_underflow, 3.0 / 6.0);
  // Codes changed: 1 → 1.25 (+2), 1 → 0.9375 (−1), −0.5 → 1 (many); 3.1 still rounds to 3.
  EXPECT_DOUBLE_EQ(g.update_success, 3.0 / 6.0);
  const std::array<std::uint64_t, 7> bins = {0, 0, 1, 3, 0, 1, 1};  // ≤−3 −2 −1 0 +1 +2 ≥+3
  EXPECT_EQ(g.delta_code, bins);
  // Only 3.1 is off the grid: |3.1 − 3| / 0.25.
  EXPECT_NEAR(g.misalignment, (3.1 - 3.0) / 0.25 / 6.0, 1e-7);
  // Values in use after: 1, 1.25, 0.9375, 0, 3 of E4M3's 253 finite values (±126 nonzero and 0).
  EXPECT_DOUBLE_EQ(g.capacity, 5.0 / 253.0);
  double dot = 0, a2 = 0, g2 = 0;
  for (std::size_t i = 0; i < grad.size(); ++i) {
    const double applied = static_cast<double>(after[i]) - before[i];
    dot += applied * -static_cast<double>(grad[i]);
    a2 += applied * applied;
    g2 += static_cast<double>(grad[i]) * grad[i];
  }
  EXPECT_NEAR(g.alignment, dot / std::sqrt(a2 * g2), 1e-12);
  // S before: 2^-3 three times, 2^-4, 2^-9 (at zero), 2^-2.
  const std::map<int, std::uint64_t> histogram = {{-9, 1}, {-4, 1}, {-3, 3}, {-2, 1}};
  EXPECT_EQ(g.log2_stiffness, histogram);
  EXPECT_NEAR(g.stiffness_entropy, 0.5 + 0.5 * std::log2(6.0), 1e-12);
  // Δcode unbinned: 0, +2, −1, 1.0 (code 56) − (−0.5, code −48) = 104, 0, 0.
  EXPECT_DOUBLE_EQ(g.delta_code_mean, 105.0 / 6.0);
  EXPECT_NEAR(g.delta_code_variance, (4.0 + 1.0 + 104.0 * 104.0) / 6.0 - (105.0 / 6.0) * (105.0 / 6.0), 1e-9);
  // Pearson correlation of log2|g| and log2 S, two passes in long double.
  const std::vector<double> log_s = {-3, -3, -3, -4, -9, -2};
  long double mx = 0, my = 0;
  for (std::size_t i = 0; i < grad.size(); ++i) {
    mx += std::log2(std::fabs(static_cast<long double>(grad[i]))) / 6;
    my += log_s[i] / 6;
  }
  long double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < grad.size(); ++i) {
    const long double dx = std::log2(std::fabs(static_cast<long double>(grad[i]))) - mx, dy = log_s[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  EXPECT_NEAR(g.grad_stiffness_correlation, static_cast<double>(sxy / std::sqrt(sxx * syy)), 1e-12);
}

TEST(GridGeometry, UnderAScaleTheSpacingIsInWeightUnits) {
  // Scale 8: the grid is E4M3 / 8, so at w = 1/8 the step is 2^-3 / 8 = 2^-6.
  const optim::WeightGrid grid{format::make_format(format::parse_format("e4m3")), optim::GridScaling::fixed, 8.0f};
  const std::vector<float> before = {0.125f, 0.125f};
  const std::vector<float> intended = {0.0075f, 0.008f};  // 0.0075 < 2^-7 = 0.0078125 ≤ 0.008
  const std::vector<float> after = {0.125f, 0.125f + 0.015625f};
  const diag::GridGeometry g = diag::grid_geometry(grid, before, after, intended, intended);
  EXPECT_DOUBLE_EQ(g.update_underflow, 0.5);
  EXPECT_DOUBLE_EQ(g.update_success, 0.5);
  EXPECT_EQ(g.log2_stiffness.begin()->first, -6);
}

}  // namespace
