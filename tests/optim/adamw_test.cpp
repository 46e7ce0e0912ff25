// AdamW, gradient clipping and the learning-rate schedule against formulas evaluated in double.
#include "optim/adamw.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "optim/schedule.hpp"

namespace {

using altgrad::optim::AdamW;
using altgrad::optim::AdamWConfig;
using altgrad::optim::ParameterRange;

// Decoupled AdamW as published: p ← p(1 − lr·wd); m ← β1 m + (1−β1) g; v ← β2 v + (1−β2) g²;
// p ← p − lr · (m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + eps).
struct ReferenceAdamW {
  std::vector<double> p, m, v;
  int t = 0;
  void step(const std::vector<float>& g, double lr, const AdamWConfig& c, const std::vector<bool>& decay) {
    ++t;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (decay[i]) p[i] *= 1.0 - lr * c.weight_decay;
      m[i] = c.beta1 * m[i] + (1.0 - c.beta1) * g[i];
      v[i] = c.beta2 * v[i] + (1.0 - c.beta2) * static_cast<double>(g[i]) * g[i];
      const double m_hat = m[i] / (1.0 - std::pow(c.beta1, t));
      const double v_hat = v[i] / (1.0 - std::pow(c.beta2, t));
      p[i] -= lr * m_hat / (std::sqrt(v_hat) + c.eps);
    }
  }
};

TEST(AdamW, MatchesThePublishedUpdateOverManySteps) {
  const AdamWConfig config{0.9f, 0.95f, 1e-8f, 0.1f};
  const std::size_t n = 300;
  std::vector<ParameterRange> ranges = {{0, 200, true}, {200, 100, false}};
  std::vector<bool> decay(n);
  for (std::size_t i = 0; i < n; ++i) decay[i] = i < 200;
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> params(n);
  for (auto& x : params) x = normal(gen);
  ReferenceAdamW ref{std::vector<double>(params.begin(), params.end()), std::vector<double>(n), std::vector<double>(n)};
  AdamW adam(n, config, ranges);
  for (int step = 0; step < 20; ++step) {
    std::vector<float> grads(n);
    for (auto& g : grads) g = normal(gen) * 0.1f;
    const double lr = 1e-2 * (step + 1) / 20.0;
    adam.step(params, grads, static_cast<float>(lr));
    ref.step(grads, static_cast<float>(lr), config, decay);
  }
  EXPECT_EQ(adam.step_count(), 20);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(params[i], ref.p[i], 1e-5 * std::max(1.0, std::fabs(ref.p[i]))) << "parameter " << i;
  }
}

TEST(AdamW, DecayAppliesOnlyToDecayingRanges) {
  AdamW adam(4, AdamWConfig{0.9f, 0.95f, 1e-8f, 0.5f}, {{0, 2, true}, {2, 2, false}});
  std::vector<float> params = {1, 1, 1, 1};
  const std::vector<float> zero_grads(4, 0.0f);
  adam.step(params, zero_grads, 0.1f);
  EXPECT_FLOAT_EQ(params[0], 0.95f);  // 1 − 0.1·0.5; the Adam term is 0 for a zero gradient
  EXPECT_FLOAT_EQ(params[2], 1.0f);
}

TEST(AdamW, RestoreContinuesExactlyWhereTheStateWasSaved) {
  const AdamWConfig config;
  std::vector<ParameterRange> ranges = {{0, 8, true}};
  std::vector<float> p1(8, 0.5f), grads = {1, -2, 3, -4, 5, -6, 7, -8};
  AdamW a(8, config, ranges);
  a.step(p1, grads, 1e-3f);
  AdamW b(8, config, ranges);
  for (const auto& tensor : a.state()) b.restore_state(tensor.name, tensor.values);
  b.restore_step_count(a.step_count());
  std::vector<float> p2 = p1;
  a.step(p1, grads, 1e-3f);
  b.step(p2, grads, 1e-3f);
  EXPECT_EQ(p1, p2);
}

TEST(AdamW, RangesMustCoverTheBufferAndStateMustFit) {
  EXPECT_THROW(AdamW(10, AdamWConfig{}, {{0, 5, true}}), std::invalid_argument);
  EXPECT_THROW(AdamW(10, AdamWConfig{}, {{5, 10, true}}), std::invalid_argument);
  AdamW a(4, AdamWConfig{}, {{0, 4, true}});
  const std::vector<float> three(3);
  EXPECT_THROW(a.restore_state("exp_avg", three), std::invalid_argument);
}

TEST(ClipGradNorm, ScalesToTheMaximumAndReportsTheNormBefore) {
  std::vector<float> g = {3, 4};  // norm 5
  EXPECT_DOUBLE_EQ(altgrad::optim::clip_grad_norm(g, 1.0), 5.0);
  const double scale = 1.0 / (5.0 + 1e-6);
  EXPECT_FLOAT_EQ(g[0], static_cast<float>(3 * scale));
  EXPECT_FLOAT_EQ(g[1], static_cast<float>(4 * scale));
  std::vector<float> small = {0.3f, 0.4f};
  altgrad::optim::clip_grad_norm(small, 1.0);
  EXPECT_EQ(small, (std::vector<float>{0.3f, 0.4f}));
}

TEST(ClipGradNorm, NormOfALargeBufferMatchesALongDoubleSum) {
  std::vector<float> g(1 << 20);
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  long double sum = 0;
  for (auto& x : g) {
    x = u(gen);
    sum += static_cast<long double>(x) * x;
  }
  EXPECT_NEAR(altgrad::optim::clip_grad_norm(g, 0.0), std::sqrt(static_cast<double>(sum)), 1e-9 * std::sqrt(static_cast<double>(sum)));
}

TEST(CosineSchedule, WarmsUpLinearlyThenDecaysToTheMinimum) {
  const altgrad::optim::CosineSchedule s{1e-3, 1e-4, 10, 110};
  EXPECT_DOUBLE_EQ(s.at(0), 1e-3 * 1 / 11);
  EXPECT_DOUBLE_EQ(s.at(9), 1e-3 * 10 / 11);
  EXPECT_DOUBLE_EQ(s.at(10), 1e-3);                   // decay ratio 0: cos 0 = 1
  EXPECT_NEAR(s.at(60), 1e-4 + 0.5 * (1e-3 - 1e-4), 1e-15);  // halfway: cos(π/2) = 0
  EXPECT_NEAR(s.at(110), 1e-4, 1e-15);
  EXPECT_DOUBLE_EQ(s.at(500), 1e-4);
}

}  // namespace
