#pragma once
// Gradient checks by central differences, in double precision.
//
// The loss is L = Σ dout · out for a fixed random dout, so its gradient is exactly what a backward
// pass computes from dout. With h = 1e-6 the truncation error (~h²) is negligible and the rounding
// error is about 1e-16 · |L| / h, so analytic and numerical gradients of a correct kernel agree to
// about 1e-9 on the small instances the tests use; a wrong formula misses by far more.
#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ops/test_tensors.hpp"

namespace altgrad::ops_test {

inline constexpr double kStep = 1e-6;
inline constexpr Tolerance kGradientTolerance{1e-7, 1e-6};

// (L(x + h·e_i) − L(x − h·e_i)) / 2h for every element i of x. loss() must run the forward pass on
// the current contents of x; x is restored exactly after each element.
inline std::vector<double> numerical_gradient(std::vector<double>& x, const std::function<double()>& loss) {
  std::vector<double> gradient(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + kStep;
    const double plus = loss();
    x[i] = saved - kStep;
    const double minus = loss();
    x[i] = saved;
    gradient[i] = (plus - minus) / (2 * kStep);
  }
  return gradient;
}

// Compares a backward pass's gradient for x with the numerical one.
inline ::testing::AssertionResult matches_finite_differences(const std::string& name,
                                                             const std::vector<double>& analytic,
                                                             std::vector<double>& x,
                                                             const std::function<double()>& loss) {
  return all_close(name, analytic, numerical_gradient(x, loss), kGradientTolerance);
}

}  // namespace altgrad::ops_test
