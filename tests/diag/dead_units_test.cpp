// Dead-unit counts on pre-activations placed just either side of the flat-tail thresholds, which
// the test finds by bisection on its own evaluation of the definition.
#include "diag/dead_units.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/thread_count.hpp"

namespace altgrad::diag_test {
namespace {

using diag::DeadUnits;

constexpr long double kBound = 0.01L;

// The definition, evaluated independently: φ and φ' in long double.
bool gelu_tail(long double z) {
  const long double cdf = 0.5L * std::erfc(-z / std::sqrt(2.0L));
  const long double pdf = std::exp(-z * z / 2) / std::sqrt(2 * std::numbers::pi_v<long double>);
  return std::fabs(z * cdf) < kBound && std::fabs(cdf + z * pdf) < kBound;
}

bool silu_tail(long double z) {
  const long double s = 1 / (1 + std::exp(-z));
  const long double ds = s * (1 - s);
  return std::fabs(z * s) < kBound && std::fabs(s + z * ds) < kBound;
}

// The edge of the tail in [dead_end, alive_end], by bisection in double.
double bisect_threshold(bool (*tail)(long double), double dead_end, double alive_end) {
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (dead_end + alive_end);
    (tail(mid) ? dead_end : alive_end) = mid;
  }
  return dead_end;
}

const double kGeluThreshold = bisect_threshold(gelu_tail, -20.0, -1.0);
const double kSiluThreshold = bisect_threshold(silu_tail, -20.0, -1.0);

TEST(DeadUnits, ThresholdsAreWhereTheDocsSay) {
  EXPECT_NEAR(kGeluThreshold, -3.0674, 1e-4);
  EXPECT_NEAR(kSiluThreshold, -6.4709, 1e-4);
}

TEST(DeadUnits, PerTokenConditionMatchesDefinitionOnAFineGrid) {
  // Step 2^-10 from −16 to 4: covers both tails, the shortcut cuts and the region near 0.
  for (int i = -16 * 1024; i <= 4 * 1024; ++i) {
    const double z = i / 1024.0;
    EXPECT_EQ(diag::in_gelu_flat_tail(z), gelu_tail(z)) << "gelu at " << z;
    EXPECT_EQ(diag::in_silu_flat_tail(z), silu_tail(z)) << "silu at " << z;
  }
}

TEST(DeadUnits, AgreesJustEitherSideOfTheThresholds) {
  for (const double delta : {1e-3, 1e-5}) {
    EXPECT_TRUE(diag::in_gelu_flat_tail(static_cast<float>(kGeluThreshold - delta)));
    EXPECT_FALSE(diag::in_gelu_flat_tail(static_cast<float>(kGeluThreshold + delta)));
    EXPECT_TRUE(diag::in_silu_flat_tail(static_cast<float>(kSiluThreshold - delta)));
    EXPECT_FALSE(diag::in_silu_flat_tail(static_cast<float>(kSiluThreshold + delta)));
  }
}

TEST(DeadUnits, NonFiniteInputs) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(diag::in_gelu_flat_tail(-inf));
  EXPECT_TRUE(diag::in_silu_flat_tail(-inf));
  EXPECT_TRUE(diag::in_gelu_flat_tail(-1e300));
  EXPECT_TRUE(diag::in_silu_flat_tail(-1e300));
  for (const double z : {inf, std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_FALSE(diag::in_gelu_flat_tail(z));
    EXPECT_FALSE(diag::in_silu_flat_tail(z));
  }
}

// Pre-activations (N, H) with the units in `dead` just below the threshold for every token, and
// every other unit just below it for all tokens but one, which sits just above.
std::vector<float> tail_batch(double threshold, std::size_t N, std::size_t H, const std::vector<bool>& dead) {
  const float below = static_cast<float>(threshold - 1e-4);
  const float above = static_cast<float>(threshold + 1e-4);
  std::vector<float> z(N * H, below);
  for (std::size_t j = 0; j < H; ++j) {
    if (!dead[j]) z[((j * 7) % N) * H + j] = above;  // the one live token, at a different row per unit
  }
  return z;
}

std::vector<bool> every_third_dead(std::size_t H) {
  std::vector<bool> dead(H);
  for (std::size_t j = 0; j < H; ++j) dead[j] = j % 3 == 0;
  return dead;
}

TEST(DeadUnits, GeluCountsUnitsDeadForEveryToken) {
  const std::size_t N = 11, H = 150;  // H spans three column blocks
  const std::vector<bool> dead = every_third_dead(H);
  const std::vector<float> fc = tail_batch(kGeluThreshold, N, H, dead);
  const DeadUnits d = diag::dead_units_gelu(fc, N, H);
  EXPECT_EQ(d.dead, 50u);
  EXPECT_EQ(d.units, H);
  EXPECT_DOUBLE_EQ(d.fraction, 50.0 / 150.0);
  EXPECT_EQ(diag::dead_units_gelu(fc, N, H).dead, 50u);
}

TEST(DeadUnits, SwigluReadsOnlyTheGateHalf) {
  const std::size_t N = 9, H = 130;
  const std::vector<bool> dead = every_third_dead(H);
  const std::vector<float> gate = tail_batch(kSiluThreshold, N, H, dead);
  // Rows [gate | value]; the values are huge or NaN and must not matter.
  std::vector<float> fc(N * 2 * H);
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t j = 0; j < H; ++j) {
      fc[n * 2 * H + j] = gate[n * H + j];
      fc[n * 2 * H + H + j] = j % 2 == 0 ? 1e30f : std::numeric_limits<float>::quiet_NaN();
    }
  }
  const DeadUnits d = diag::dead_units_swiglu(fc, N, H);
  EXPECT_EQ(d.dead, 44u);
  EXPECT_EQ(d.units, H);
  EXPECT_DOUBLE_EQ(d.fraction, 44.0 / 130.0);
  EXPECT_EQ(diag::dead_units_swiglu(fc, N, H).dead, 44u);
  // Read as GELU pre-activations, every value (≈ −6.47) is deep in GELU's tail.
  EXPECT_EQ(diag::dead_units_gelu(gate, N, H).dead, H);
}

TEST(DeadUnits, EmptyBatchesAndSizeChecks) {
  EXPECT_EQ(diag::dead_units_gelu({}, 0, 8).dead, 0u);
  EXPECT_EQ(diag::dead_units_gelu({}, 0, 8).fraction, 0.0);
  EXPECT_EQ(diag::dead_units_gelu({}, 4, 0).fraction, 0.0);
  const std::vector<float> fc(12, -10.0f);
  EXPECT_EQ(diag::dead_units_gelu(fc, 3, 4).dead, 4u);
  EXPECT_EQ(diag::dead_units_swiglu(fc, 3, 2).dead, 2u);
  EXPECT_THROW(diag::dead_units_gelu(fc, 3, 5), std::invalid_argument);
  EXPECT_THROW(diag::dead_units_swiglu(fc, 3, 4), std::invalid_argument);
}

TEST(DeadUnits, SameCountWithOneAndTwoThreads) {
  const std::size_t N = 256, H = 1024;
  std::mt19937_64 rng(9);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  // Unit means from −2.5 to −5.5, so some units are dead on all 256 tokens and some are not.
  std::vector<float> fc(N * H);
  for (std::size_t i = 0; i < fc.size(); ++i) {
    fc[i] = -2.5f - 3.0f * static_cast<float>(i % H) / static_cast<float>(H) + normal(rng);
  }
  const DeadUnits one = test_support::with_threads(1, [&] { return diag::dead_units_gelu(fc, N, H); });
  const DeadUnits two = test_support::with_threads(2, [&] { return diag::dead_units_gelu(fc, N, H); });
  EXPECT_EQ(one.dead, two.dead);
  EXPECT_GT(one.dead, 0u);
  EXPECT_LT(one.dead, H);
}

}  // namespace
}  // namespace altgrad::diag_test
