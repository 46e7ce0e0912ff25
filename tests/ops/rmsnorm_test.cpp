#include "ops/cpu/rmsnorm.hpp"

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

constexpr double kRmsEps = 1e-5;

struct RmsNormCase {
  std::size_t N, C;
  std::vector<double> inp, weight, dout;
};

// Rows at different scales, some off-centre: RMSNorm divides by the root mean square, not the spread.
RmsNormCase make_rmsnorm_case(std::size_t N, std::size_t C, std::uint64_t seed) {
  RmsNormCase k{N, C, random_values(N * C, seed), random_values(C, seed + 1, 0.5, 1.5), random_values(N * C, seed + 2)};
  const std::vector<double> offsets = random_values(N, seed + 3, -1.0, 1.0);
  const std::vector<double> spreads = random_values(N, seed + 4, 0.2, 3.0);
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t c = 0; c < C; ++c) {
      k.inp[n * C + c] = static_cast<float>(offsets[n] + spreads[n] * k.inp[n * C + c]);
    }
  }
  return k;
}

Tensors<double> reference_forward(const RmsNormCase& k) {
  std::vector<double> out(k.N * k.C), rstd(k.N);
  for (std::size_t n = 0; n < k.N; ++n) {
    const double* x = &k.inp[n * k.C];
    long double mean_square = 0;
    for (std::size_t c = 0; c < k.C; ++c) mean_square += static_cast<long double>(x[c]) * x[c];
    mean_square /= k.C;
    const long double r = 1.0L / std::sqrt(mean_square + kRmsEps);
    for (std::size_t c = 0; c < k.C; ++c) out[n * k.C + c] = static_cast<double>(x[c] * r * k.weight[c]);
    rstd[n] = static_cast<double>(r);
  }
  return {{"out", out}, {"rstd", rstd}};
}

template <typename Scalar>
Pass<Scalar> run(const RmsNormCase& k, int backward_calls = 1) {
  const auto inp = converted<Scalar>(k.inp);
  const auto weight = converted<Scalar>(k.weight);
  const auto dout = converted<Scalar>(k.dout);
  std::vector<Scalar> out(inp.size()), rstd(k.N);
  rmsnorm_forward<Scalar>(out, rstd, inp, weight, k.N, k.C, static_cast<Scalar>(kRmsEps));
  std::vector<Scalar> dinp(inp.size()), dweight(k.C);
  for (int i = 0; i < backward_calls; ++i) {
    rmsnorm_backward<Scalar>(dinp, dweight, dout, inp, weight, rstd, k.N, k.C);
  }
  return {{{"out", out}, {"rstd", rstd}}, {{"dinp", dinp}, {"dweight", dweight}}};
}

template <typename Scalar>
class RmsNormTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(RmsNormTyped, ScalarTypes);

TYPED_TEST(RmsNormTyped, ForwardMatchesFormula) {
  const RmsNormCase k = make_rmsnorm_case(6, 40, 1);
  EXPECT_TRUE(all_close(run<TypeParam>(k).outputs, reference_forward(k), kReferenceTolerance<TypeParam>));
}

// With unit weight every row comes out with mean square ms / (ms + eps), ms its input's.
TYPED_TEST(RmsNormTyped, UnitWeightRowsHaveUnitRms) {
  RmsNormCase k = make_rmsnorm_case(4, 64, 2);
  k.weight.assign(k.C, 1.0);
  const std::vector<TypeParam> out = run<TypeParam>(k).outputs.at("out");
  for (std::size_t n = 0; n < k.N; ++n) {
    double in_squares = 0, out_squares = 0;
    for (std::size_t c = 0; c < k.C; ++c) in_squares += k.inp[n * k.C + c] * k.inp[n * k.C + c];
    for (std::size_t c = 0; c < k.C; ++c) out_squares += double{out[n * k.C + c]} * out[n * k.C + c];
    const double ms = in_squares / k.C;
    EXPECT_NEAR(out_squares / k.C, ms / (ms + kRmsEps), 1e-5) << "row " << n;
  }
}

TEST(RmsNorm, GradientsMatchFiniteDifferences) {
  RmsNormCase k = make_rmsnorm_case(3, 7, 3);
  const Pass<double> pass = run<double>(k);
  std::vector<double> out(k.N * k.C), rstd(k.N);
  const auto loss = [&] {
    rmsnorm_forward<double>(out, rstd, k.inp, k.weight, k.N, k.C, kRmsEps);
    return dot(k.dout, out);
  };
  EXPECT_TRUE(matches_finite_differences("dinp", pass.gradients.at("dinp"), k.inp, loss));
  EXPECT_TRUE(matches_finite_differences("dweight", pass.gradients.at("dweight"), k.weight, loss));
}

TEST(RmsNorm, FloatBackwardMatchesDouble) {
  const RmsNormCase k = make_rmsnorm_case(5, 48, 4);
  EXPECT_TRUE(all_close(run<float>(k).gradients, run<double>(k).gradients, {1e-5, 1e-4}));
}

TEST(RmsNorm, BackwardAccumulates) {
  const RmsNormCase k = make_rmsnorm_case(4, 9, 5);
  EXPECT_TRUE(all_close(run<double>(k, 2).gradients, scaled(run<double>(k, 1).gradients, 2), {1e-14, 1e-14}));
}

TEST(RmsNorm, BitsDoNotDependOnThreadCount) {
  constexpr std::size_t N = 64, C = 320;
  static_assert(N * C >= kMinParallelWork, "large enough to run in parallel");
  const RmsNormCase k = make_rmsnorm_case(N, C, 6);
  expect_identical_bits_for_any_thread_count([&] { return run<float>(k); });
}

TEST(RmsNorm, RejectsWrongSizes) {
  std::vector<float> out(6), rstd(2), inp(6), weight(3), wrong_weight(2);
  EXPECT_NO_THROW(rmsnorm_forward<float>(out, rstd, inp, weight, 2, 3, 1e-5f));
  EXPECT_THROW(rmsnorm_forward<float>(out, rstd, inp, wrong_weight, 2, 3, 1e-5f), std::invalid_argument);
}

}  // namespace
