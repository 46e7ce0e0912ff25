#include "ops/cpu/softmax_cross_entropy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "ops/cpu/parallel.hpp"
#include "ops/determinism.hpp"
#include "ops/finite_difference.hpp"
#include "ops/test_tensors.hpp"

namespace {

using namespace altgrad::ops::cpu;
using namespace altgrad::ops_test;

struct SoftmaxCrossEntropyCase {
  std::size_t N, V;
  std::vector<double> logits, dlosses;
  std::vector<std::int32_t> targets;
};

SoftmaxCrossEntropyCase make_softmax_cross_entropy_case(std::size_t N, std::size_t V, std::uint64_t seed) {
  return {N, V, random_values(N * V, seed, -3.0, 3.0), random_values(N, seed + 1), random_tokens(N, V, seed + 2)};
}

// probs = e^z / Σ e^z and loss = −log probs[target], straight from the definition (no shift: the
// test logits are small), in long double.
Tensors<double> reference_forward(const SoftmaxCrossEntropyCase& k) {
  std::vector<double> losses(k.N), probs(k.N * k.V);
  for (std::size_t n = 0; n < k.N; ++n) {
    long double sum = 0;
    for (std::size_t v = 0; v < k.V; ++v) sum += std::exp(static_cast<long double>(k.logits[n * k.V + v]));
    for (std::size_t v = 0; v < k.V; ++v) {
      probs[n * k.V + v] = static_cast<double>(std::exp(static_cast<long double>(k.logits[n * k.V + v])) / sum);
    }
    losses[n] =
        static_cast<double>(-std::log(std::exp(static_cast<long double>(k.logits[n * k.V + k.targets[n]])) / sum));
  }
  return {{"losses", losses}, {"probs", probs}};
}

template <typename Scalar>
Pass<Scalar> run(const SoftmaxCrossEntropyCase& k, int backward_calls = 1) {
  const auto logits = converted<Scalar>(k.logits);
  const auto dlosses = converted<Scalar>(k.dlosses);
  std::vector<Scalar> losses(k.N), probs(logits.size()), dlogits(logits.size());
  softmax_cross_entropy_forward<Scalar>(losses, probs, logits, k.targets, k.N, k.V);
  for (int i = 0; i < backward_calls; ++i) {
    softmax_cross_entropy_backward<Scalar>(dlogits, dlosses, probs, k.targets, k.N, k.V);
  }
  return {{{"losses", losses}, {"probs", probs}}, {{"dlogits", dlogits}}};
}

template <typename Scalar>
class SoftmaxCrossEntropyTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SoftmaxCrossEntropyTyped, ScalarTypes);

TYPED_TEST(SoftmaxCrossEntropyTyped, ForwardMatchesDefinition) {
  const SoftmaxCrossEntropyCase k = make_softmax_cross_entropy_case(6, 50, 1);
  EXPECT_TRUE(all_close(run<TypeParam>(k).outputs, reference_forward(k), kReferenceTolerance<TypeParam>));
}

// Logits far beyond exp's range. Row 0: z = (1000, 0, −1000, 999), target 3, so the loss is
// log(e^1000 + e^999) − 999 = 1 + log(1 + e^−1) up to terms below e^−999. Row 1: same logits,
// target 2, loss 2000 + log(1 + e^−1), with probability e^−2000 underflowing to 0.
TYPED_TEST(SoftmaxCrossEntropyTyped, LargeLogitsStayFinite) {
  const std::vector<double> row = {1000, 0, -1000, 999};
  SoftmaxCrossEntropyCase k{2, 4, row, {1.0, 1.0}, {3, 2}};
  k.logits.insert(k.logits.end(), row.begin(), row.end());
  const Pass<TypeParam> pass = run<TypeParam>(k);
  const double tail = std::log1p(std::exp(-1.0));
  EXPECT_TRUE(all_close("losses", pass.outputs.at("losses"), std::vector<double>{1 + tail, 2000 + tail},
                        kReferenceTolerance<TypeParam>));
  const double top = 1 / (1 + std::exp(-1.0));
  EXPECT_TRUE(all_close("probs", pass.outputs.at("probs"), std::vector<double>{top, 0, 0, 1 - top, top, 0, 0, 1 - top},
                        kReferenceTolerance<TypeParam>));
  for (const TypeParam d : pass.gradients.at("dlogits")) EXPECT_TRUE(std::isfinite(d));
}

TEST(SoftmaxCrossEntropy, GradientMatchesFiniteDifferences) {
  SoftmaxCrossEntropyCase k = make_softmax_cross_entropy_case(4, 7, 2);
  const Pass<double> pass = run<double>(k);
  std::vector<double> losses(k.N), probs(k.N * k.V);
  const auto loss = [&] {
    softmax_cross_entropy_forward<double>(losses, probs, k.logits, k.targets, k.N, k.V);
    return dot(k.dlosses, losses);
  };
  EXPECT_TRUE(matches_finite_differences("dlogits", pass.gradients.at("dlogits"), k.logits, loss));
}

// Each row of the gradient sums to dloss · (Σ probs − 1) = 0; the target's entry is the only negative
// one when dloss > 0.
TEST(SoftmaxCrossEntropy, GradientRowsSumToZero) {
  SoftmaxCrossEntropyCase k = make_softmax_cross_entropy_case(5, 30, 3);
  k.dlosses.assign(k.N, 1.0 / k.N);
  const std::vector<double> dlogits = run<double>(k).gradients.at("dlogits");
  for (std::size_t n = 0; n < k.N; ++n) {
    double sum = 0;
    for (std::size_t v = 0; v < k.V; ++v) {
      sum += dlogits[n * k.V + v];
      EXPECT_EQ(dlogits[n * k.V + v] < 0, static_cast<std::int32_t>(v) == k.targets[n]) << n << ", " << v;
    }
    EXPECT_NEAR(sum, 0.0, 1e-16);
  }
}

TEST(SoftmaxCrossEntropy, FloatBackwardMatchesDouble) {
  const SoftmaxCrossEntropyCase k = make_softmax_cross_entropy_case(6, 40, 4);
  EXPECT_TRUE(all_close(run<float>(k).gradients, run<double>(k).gradients, {1e-6, 1e-4}));
}

TEST(SoftmaxCrossEntropy, BackwardAccumulates) {
  const SoftmaxCrossEntropyCase k = make_softmax_cross_entropy_case(3, 8, 5);
  EXPECT_TRUE(all_close(run<double>(k, 2).gradients, scaled(run<double>(k, 1).gradients, 2), {1e-15, 1e-15}));
}

TEST(SoftmaxCrossEntropy, BitsDoNotDependOnThreadCount) {
  constexpr std::size_t N = 128, V = 256;
  static_assert(N * V >= kMinParallelWork, "large enough to run in parallel");
  const SoftmaxCrossEntropyCase k = make_softmax_cross_entropy_case(N, V, 6);
  expect_identical_bits_for_any_thread_count([&] { return run<float>(k); });
}

TEST(SoftmaxCrossEntropy, RejectsTargetsOutOfRange) {
  std::vector<float> losses(2), probs(6), logits(6);
  EXPECT_NO_THROW(softmax_cross_entropy_forward<float>(losses, probs, logits, std::vector<std::int32_t>{0, 2}, 2, 3));
  EXPECT_THROW(softmax_cross_entropy_forward<float>(losses, probs, logits, std::vector<std::int32_t>{0, 3}, 2, 3),
               std::invalid_argument);
  EXPECT_THROW(softmax_cross_entropy_forward<float>(losses, probs, logits, std::vector<std::int32_t>{-1, 0}, 2, 3),
               std::invalid_argument);
  EXPECT_THROW(softmax_cross_entropy_backward<float>(probs, losses, probs, std::vector<std::int32_t>{0, 3}, 2, 3),
               std::invalid_argument);
}

}  // namespace
