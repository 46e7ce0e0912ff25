// The power iteration on quadratics L = ½ wᵀAw with a known spectrum (∇L = Aw, Hessian A): it finds
// the eigenvalue of largest magnitude with its sign, gives the buffer back bit for bit, and gives
// the same bits on one and two threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "diag/hessian_power_iteration.hpp"
#include "support/thread_count.hpp"

namespace altgrad::diag {
namespace {

// A = Q diag(eigenvalues) Qᵀ with Q a random orthogonal matrix (Gram–Schmidt in double).
std::vector<double> symmetric_with_spectrum(const std::vector<double>& eigenvalues, unsigned seed) {
  const std::size_t n = eigenvalues.size();
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> q(n * n);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = 0; i < n; ++i) q[i * n + j] = normal(rng);
    for (std::size_t k = 0; k < j; ++k) {
      double dot = 0;
      for (std::size_t i = 0; i < n; ++i) dot += q[i * n + j] * q[i * n + k];
      for (std::size_t i = 0; i < n; ++i) q[i * n + j] -= dot * q[i * n + k];
    }
    double norm = 0;
    for (std::size_t i = 0; i < n; ++i) norm += q[i * n + j] * q[i * n + j];
    for (std::size_t i = 0; i < n; ++i) q[i * n + j] /= std::sqrt(norm);
  }
  std::vector<double> a(n * n, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      for (std::size_t k = 0; k < n; ++k) a[r * n + c] += q[r * n + k] * eigenvalues[k] * q[c * n + k];
    }
  }
  return a;
}

struct Quadratic {
  std::vector<double> a;
  std::size_t n;
  std::vector<float> w;

  GradientAt gradient() {
    return [this](std::span<float> out) {
      for (std::size_t r = 0; r < n; ++r) {
        double sum = 0;
        for (std::size_t c = 0; c < n; ++c) sum += a[r * n + c] * w[c];
        out[r] = static_cast<float>(sum);
      }
    };
  }
};

Quadratic quadratic(const std::vector<double>& eigenvalues) {
  Quadratic q{symmetric_with_spectrum(eigenvalues, 7), eigenvalues.size(), std::vector<float>(eigenvalues.size())};
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  for (float& x : q.w) x = normal(rng);
  return q;
}

std::vector<double> spectrum(double top, double second, std::size_t n) {
  std::vector<double> e(n);
  for (std::size_t i = 0; i < n; ++i) e[i] = 0.3 * std::sin(static_cast<double>(i));  // |e| ≤ 0.3
  e[5] = top;
  e[11] = second;
  return e;
}

TEST(HessianPowerIteration, FindsTheLargestPositiveEigenvalue) {
  Quadratic q = quadratic(spectrum(4.0, -2.0, 40));
  HessianPowerIteration power(q.n);
  const HessianEstimate h = power.estimate(q.w, q.gradient(), {1e-3, 40, 11, 0});
  // |λ2/λ1| = 0.5: after 40 iterations the Rayleigh quotient is off by about 0.5^80 relative; what
  // is left is FP32 rounding of the gradients (measured: 1.2e-4 in the residual).
  EXPECT_NEAR(h.eigenvalue, 4.0, 4.0 * 1e-5);
  EXPECT_LT(h.residual, 1e-3);
  EXPECT_EQ(h.iterations, 40);
}

TEST(HessianPowerIteration, ReportsANegativeEigenvalueOfLargestMagnitudeWithItsSign) {
  Quadratic q = quadratic(spectrum(-5.0, 2.0, 40));
  HessianPowerIteration power(q.n);
  EXPECT_NEAR(power.estimate(q.w, q.gradient(), {1e-3, 40, 11, 0}).eigenvalue, -5.0, 5.0 * 1e-5);
}

TEST(HessianPowerIteration, FewIterationsOnASmallGapAreFlaggedByTheResidual) {
  Quadratic q = quadratic(spectrum(4.0, 3.9, 40));
  HessianPowerIteration power(q.n);
  const HessianEstimate h = power.estimate(q.w, q.gradient(), {1e-3, 3, 11, 0});
  EXPECT_LE(h.eigenvalue, 4.0 + 1e-4);  // a Rayleigh quotient never exceeds the top eigenvalue
  EXPECT_GT(h.residual, 1e-3);          // not converged, and it says so
}

TEST(HessianPowerIteration, GivesTheBufferBackBitForBit) {
  Quadratic q = quadratic(spectrum(4.0, -2.0, 40));
  q.w[3] = 1e-30f;  // values that w ± εv cannot hold exactly
  q.w[4] = 3.0e7f;
  const std::vector<float> before = q.w;
  HessianPowerIteration power(q.n);
  power.estimate(q.w, q.gradient(), {1e-3, 5, 11, 0});
  EXPECT_EQ(std::memcmp(before.data(), q.w.data(), before.size() * sizeof(float)), 0);
}

TEST(HessianPowerIteration, TheSameBitsOnOneAndTwoThreads) {
  // Longer than one reduction chunk (2^14), so two threads split the sums.
  const std::size_t n = 40'000;
  std::vector<float> w(n), diagonal(n);
  for (std::size_t i = 0; i < n; ++i) {
    w[i] = std::sin(static_cast<float>(i));
    diagonal[i] = 1.0f + 0.5f * std::cos(static_cast<float>(i) * 0.37f);
  }
  diagonal[123] = 9.0f;
  auto estimate = [&] {
    HessianPowerIteration power(n);
    std::vector<float> params = w;
    return power.estimate(
        params,
        [&](std::span<float> out) {
          for (std::size_t i = 0; i < n; ++i) out[i] = diagonal[i] * params[i] + 0.1f * params[i] * params[i];
        },
        {1e-3, 6, 11, 4});
  };
  const HessianEstimate one = test_support::with_threads(1, estimate);
  const HessianEstimate two = test_support::with_threads(2, estimate);
  EXPECT_EQ(std::memcmp(&one.eigenvalue, &two.eigenvalue, sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(&one.residual, &two.residual, sizeof(double)), 0);
}

TEST(HessianPowerIteration, RefusesBadArguments) {
  HessianPowerIteration power(4);
  std::vector<float> w(4), wrong(5);
  const GradientAt zero = [](std::span<float> out) { std::fill(out.begin(), out.end(), 0.0f); };
  EXPECT_THROW(power.estimate(wrong, zero, {}), std::invalid_argument);
  EXPECT_THROW(power.estimate(w, zero, {0.0, 5, 0, 0}), std::invalid_argument);
  EXPECT_THROW(power.estimate(w, zero, {1e-3, 0, 0, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::diag
