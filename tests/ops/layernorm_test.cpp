#include "ops/cpu/layernorm.hpp"

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

constexpr double kEps = 1e-5;

struct LayerNormCase {
  std::size_t N, C;
  std::vector<double> inp, weight, bias, dout;  // bias empty: no bias
};

// Rows get different offsets and spreads so mean and variance both matter.
LayerNormCase make_layernorm_case(std::size_t N, std::size_t C, bool with_bias, std::uint64_t seed) {
  LayerNormCase k{N,
         C,
         random_values(N * C, seed),
         random_values(C, seed + 1, 0.5, 1.5),
         with_bias ? random_values(C, seed + 2) : std::vector<double>{},
         random_values(N * C, seed + 3)};
  const std::vector<double> offsets = random_values(N, seed + 4, -2.0, 2.0);
  const std::vector<double> spreads = random_values(N, seed + 5, 0.2, 3.0);
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t c = 0; c < C; ++c) {
      k.inp[n * C + c] = static_cast<float>(offsets[n] + spreads[n] * k.inp[n * C + c]);
    }
  }
  return k;
}

// The textbook formula: biased variance, as torch.nn.LayerNorm.
Tensors<double> reference_forward(const LayerNormCase& k) {
  std::vector<double> out(k.N * k.C), mean(k.N), rstd(k.N);
  for (std::size_t n = 0; n < k.N; ++n) {
    const double* x = &k.inp[n * k.C];
    long double sum = 0;
    for (std::size_t c = 0; c < k.C; ++c) sum += x[c];
    const long double mu = sum / k.C;
    long double var = 0;
    for (std::size_t c = 0; c < k.C; ++c) var += (x[c] - mu) * (x[c] - mu);
    var /= k.C;
    const long double r = 1.0L / std::sqrt(var + kEps);
    for (std::size_t c = 0; c < k.C; ++c) {
      out[n * k.C + c] = static_cast<double>((x[c] - mu) * r * k.weight[c] + (k.bias.empty() ? 0.0 : k.bias[c]));
    }
    mean[n] = static_cast<double>(mu);
    rstd[n] = static_cast<double>(r);
  }
  return {{"out", out}, {"mean", mean}, {"rstd", rstd}};
}

template <typename Scalar>
Pass<Scalar> run(const LayerNormCase& k, int backward_calls = 1) {
  const auto inp = converted<Scalar>(k.inp);
  const auto weight = converted<Scalar>(k.weight);
  const auto bias = converted<Scalar>(k.bias);
  const auto dout = converted<Scalar>(k.dout);
  std::vector<Scalar> out(inp.size()), mean(k.N), rstd(k.N);
  layernorm_forward<Scalar>(out, mean, rstd, inp, weight, bias, k.N, k.C, static_cast<Scalar>(kEps));
  std::vector<Scalar> dinp(inp.size()), dweight(k.C), dbias(bias.size());
  for (int i = 0; i < backward_calls; ++i) {
    layernorm_backward<Scalar>(dinp, dweight, dbias, dout, inp, weight, mean, rstd, k.N, k.C);
  }
  return {{{"out", out}, {"mean", mean}, {"rstd", rstd}}, {{"dinp", dinp}, {"dweight", dweight}, {"dbias", dbias}}};
}

template <typename Scalar>
class LayerNormTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LayerNormTyped, ScalarTypes);

TYPED_TEST(LayerNormTyped, ForwardMatchesFormula) {
  for (const bool with_bias : {false, true}) {
    SCOPED_TRACE(with_bias ? "with bias" : "without bias");
    const LayerNormCase k = make_layernorm_case(6, 40, with_bias, 1);
    EXPECT_TRUE(all_close(run<TypeParam>(k).outputs, reference_forward(k), kReferenceTolerance<TypeParam>));
  }
}

// With unit weight and no bias every row comes out with mean 0 and variance var / (var + eps).
TYPED_TEST(LayerNormTyped, UnitWeightRowsAreStandardized) {
  LayerNormCase k = make_layernorm_case(4, 64, false, 2);
  k.weight.assign(k.C, 1.0);
  const std::vector<TypeParam> out = run<TypeParam>(k).outputs.at("out");
  const Tensors<double> reference = reference_forward(k);
  for (std::size_t n = 0; n < k.N; ++n) {
    double sum = 0, squares = 0;
    for (std::size_t c = 0; c < k.C; ++c) sum += out[n * k.C + c];
    for (std::size_t c = 0; c < k.C; ++c) squares += double{out[n * k.C + c]} * out[n * k.C + c];
    const double var = 1 / (reference.at("rstd")[n] * reference.at("rstd")[n]) - kEps;
    EXPECT_NEAR(sum / k.C, 0.0, 1e-6) << "row " << n;
    EXPECT_NEAR(squares / k.C, var / (var + kEps), 1e-5) << "row " << n;
  }
}

TEST(LayerNorm, GradientsMatchFiniteDifferences) {
  for (const bool with_bias : {false, true}) {
    SCOPED_TRACE(with_bias ? "with bias" : "without bias");
    LayerNormCase k = make_layernorm_case(3, 7, with_bias, 3);
    const Pass<double> pass = run<double>(k);
    std::vector<double> out(k.N * k.C), mean(k.N), rstd(k.N);
    const auto loss = [&] {
      layernorm_forward<double>(out, mean, rstd, k.inp, k.weight, k.bias, k.N, k.C, kEps);
      return dot(k.dout, out);
    };
    EXPECT_TRUE(matches_finite_differences("dinp", pass.gradients.at("dinp"), k.inp, loss));
    EXPECT_TRUE(matches_finite_differences("dweight", pass.gradients.at("dweight"), k.weight, loss));
    if (with_bias) {
      EXPECT_TRUE(matches_finite_differences("dbias", pass.gradients.at("dbias"), k.bias, loss));
    }
  }
}

TEST(LayerNorm, FloatBackwardMatchesDouble) {
  const LayerNormCase k = make_layernorm_case(5, 48, true, 4);
  EXPECT_TRUE(all_close(run<float>(k).gradients, run<double>(k).gradients, {1e-5, 1e-4}));
}

TEST(LayerNorm, BackwardAccumulates) {
  const LayerNormCase k = make_layernorm_case(4, 9, true, 5);
  EXPECT_TRUE(all_close(run<double>(k, 2).gradients, scaled(run<double>(k, 1).gradients, 2), {1e-14, 1e-14}));
}

TEST(LayerNorm, BitsDoNotDependOnThreadCount) {
  constexpr std::size_t N = 64, C = 320;
  static_assert(N * C >= kMinParallelWork, "large enough to run in parallel");
  const LayerNormCase k = make_layernorm_case(N, C, true, 6);
  expect_identical_bits_for_any_thread_count([&] { return run<float>(k); });
}

TEST(LayerNorm, RejectsWrongSizes) {
  std::vector<float> out(6), mean(2), rstd(2), inp(6), weight(3);
  EXPECT_NO_THROW(layernorm_forward<float>(out, mean, rstd, inp, weight, {}, 2, 3, 1e-5f));
  EXPECT_THROW(layernorm_forward<float>(out, mean, rstd, inp, weight, std::vector<float>(2), 2, 3, 1e-5f),
               std::invalid_argument);
  std::vector<float> wrong_mean(3);
  EXPECT_THROW(layernorm_forward<float>(out, wrong_mean, rstd, inp, weight, {}, 2, 3, 1e-5f), std::invalid_argument);
}

}  // namespace
