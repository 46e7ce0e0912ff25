// The threshold search on a synthetic objective with a known threshold: everything above it
// diverges. The bracket must hold the threshold and be as narrow as the bisections promise.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sweep/lr_bisection.hpp"

namespace altgrad::sweep {
namespace {

std::vector<Probe> search(const BisectionRange& range, double threshold) {
  std::vector<Probe> probes;
  while (const auto value = next_probe(range, probes)) probes.push_back({*value, *value > threshold});
  return probes;
}

TEST(LrBisection, TheBracketHoldsTheThresholdAndHalvesPerBisection) {
  const BisectionRange range{1e-4, 1e-1, 6};
  for (const double threshold : {1.1e-4, 3.3e-4, 1e-3, 2.7e-3, 5e-3, 0.0123, 0.05, 0.099}) {
    const auto probes = search(range, threshold);
    ASSERT_EQ(probes.size(), 8u) << threshold;
    const Bracket b = bracket_of(probes);
    ASSERT_TRUE(b.stable && b.diverged) << threshold;
    EXPECT_LE(*b.stable, threshold);
    EXPECT_GT(*b.diverged, threshold);
    EXPECT_NEAR(std::log10(*b.diverged) - std::log10(*b.stable), 3.0 / 64, 1e-12) << threshold;
  }
}

TEST(LrBisection, ProbesAreTheEndsThenLogMidpoints) {
  const auto probes = search({1e-4, 1e-2, 2}, 5e-3);
  ASSERT_EQ(probes.size(), 4u);
  EXPECT_EQ(probes[0].value, 1e-4);
  EXPECT_EQ(probes[1].value, 1e-2);
  EXPECT_NEAR(probes[2].value, 1e-3, 1e-15);          // stable
  EXPECT_NEAR(probes[3].value, std::sqrt(1e-5), 1e-15);  // between 1e-3 and 1e-2: 10^-2.5, stable
  EXPECT_FALSE(probes[3].diverged);
}

TEST(LrBisection, AThresholdOutsideTheRangeEndsTheSearchAtOnce) {
  const BisectionRange range{1e-4, 1e-1, 5};
  auto probes = search(range, 1e-5);  // even low diverges
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_FALSE(bracket_of(probes).stable);
  EXPECT_EQ(*bracket_of(probes).diverged, 1e-4);
  probes = search(range, 1.0);  // even high is stable
  ASSERT_EQ(probes.size(), 2u);
  EXPECT_EQ(*bracket_of(probes).stable, 1e-1);
  EXPECT_FALSE(bracket_of(probes).diverged);
}

TEST(LrBisection, ANonMonotoneOutcomeKeepsTheBracketBelowTheSmallestDivergence) {
  // A noisy objective: 3e-3 diverged although 1e-2's neighbour 5e-3 did not.
  const std::vector<Probe> probes = {{1e-4, false}, {1e-1, true}, {3e-3, true}, {5e-3, false}};
  const Bracket b = bracket_of(probes);
  EXPECT_EQ(*b.diverged, 3e-3);
  EXPECT_EQ(*b.stable, 1e-4);
}

}  // namespace
}  // namespace altgrad::sweep
