// The checking tools themselves: a gradient check that cannot fail proves nothing.
#include "ops/finite_difference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/test_tensors.hpp"

namespace {

using namespace altgrad::ops_test;

TEST(FiniteDifference, RecoversAKnownGradient) {
  std::vector<double> x = random_values(20, 1, -2.0, 2.0);
  const auto loss = [&] {
    double sum = 0;
    for (const double v : x) sum += v * v * v + std::sin(v);
    return sum;
  };
  std::vector<double> gradient(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) gradient[i] = 3 * x[i] * x[i] + std::cos(x[i]);
  EXPECT_TRUE(matches_finite_differences("x", gradient, x, loss));

  gradient[7] *= 1 + 1e-5;
  const ::testing::AssertionResult result = matches_finite_differences("x", gradient, x, loss);
  ASSERT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("1 of 20 elements"), std::string::npos) << result.message();
  EXPECT_NE(std::string(result.message()).find("worst at [7]"), std::string::npos) << result.message();
}

TEST(FiniteDifference, NaNIsNeverClose) {
  const std::vector<double> want = {1.0, 2.0};
  EXPECT_FALSE(all_close("nan", std::vector<double>{1.0, NAN}, want, {1, 1}));
  EXPECT_TRUE(all_close("exact", want, want, {0, 0}));
}

}  // namespace
