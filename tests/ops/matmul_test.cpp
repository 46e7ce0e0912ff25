#include "ops/cpu/matmul.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "ops/determinism.hpp"
#include "ops/finite_difference.hpp"
#include "ops/test_tensors.hpp"

namespace {

using namespace altgrad::ops::cpu;
using namespace altgrad::ops_test;

struct MatmulCase {
  std::size_t N, C, OC;
  std::vector<double> inp, weight, bias, dout;  // bias empty: no bias
};

MatmulCase make_matmul_case(std::size_t N, std::size_t C, std::size_t OC, bool with_bias, std::uint64_t seed) {
  return {N,
          C,
          OC,
          random_values(N * C, seed),
          random_values(OC * C, seed + 1),
          with_bias ? random_values(OC, seed + 2) : std::vector<double>{},
          random_values(N * OC, seed + 3)};
}

// out[n, o] = Σ_c inp[n, c] · weight[o, c] + bias[o], in long double.
std::vector<double> reference_forward(const MatmulCase& k) {
  std::vector<double> out(k.N * k.OC);
  for (std::size_t n = 0; n < k.N; ++n) {
    for (std::size_t o = 0; o < k.OC; ++o) {
      long double sum = k.bias.empty() ? 0.0L : k.bias[o];
      for (std::size_t c = 0; c < k.C; ++c) sum += static_cast<long double>(k.inp[n * k.C + c]) * k.weight[o * k.C + c];
      out[n * k.OC + o] = static_cast<double>(sum);
    }
  }
  return out;
}

// One forward pass, then `backward_calls` backward passes into zeroed gradients.
template <typename Scalar>
Pass<Scalar> run(const MatmulCase& k, int backward_calls = 1) {
  const auto inp = converted<Scalar>(k.inp);
  const auto weight = converted<Scalar>(k.weight);
  const auto bias = converted<Scalar>(k.bias);
  const auto dout = converted<Scalar>(k.dout);
  std::vector<Scalar> out(k.N * k.OC);
  matmul_forward<Scalar>(out, inp, weight, bias, k.N, k.C, k.OC);
  std::vector<Scalar> dinp(inp.size()), dweight(weight.size()), dbias(bias.size());
  for (int i = 0; i < backward_calls; ++i) {
    matmul_backward<Scalar>(dinp, dweight, dbias, dout, inp, weight, k.N, k.C, k.OC);
  }
  return {{{"out", out}}, {{"dinp", dinp}, {"dweight", dweight}, {"dbias", dbias}}};
}

template <typename Scalar>
class MatmulTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatmulTyped, ScalarTypes);

TYPED_TEST(MatmulTyped, ForwardMatchesNaiveLoops) {
  for (const bool with_bias : {false, true}) {
    SCOPED_TRACE(with_bias ? "with bias" : "without bias");
    const MatmulCase k = make_matmul_case(7, 33, 5, with_bias, 1);
    EXPECT_TRUE(
        all_close("out", run<TypeParam>(k).outputs.at("out"), reference_forward(k), kReferenceTolerance<TypeParam>));
  }
}

TEST(Matmul, GradientsMatchFiniteDifferences) {
  for (const bool with_bias : {false, true}) {
    SCOPED_TRACE(with_bias ? "with bias" : "without bias");
    MatmulCase k = make_matmul_case(5, 4, 3, with_bias, 2);
    const Pass<double> pass = run<double>(k);
    std::vector<double> out(k.N * k.OC);
    const auto loss = [&] {
      matmul_forward<double>(out, k.inp, k.weight, k.bias, k.N, k.C, k.OC);
      return dot(k.dout, out);
    };
    EXPECT_TRUE(matches_finite_differences("dinp", pass.gradients.at("dinp"), k.inp, loss));
    EXPECT_TRUE(matches_finite_differences("dweight", pass.gradients.at("dweight"), k.weight, loss));
    if (with_bias) {
      EXPECT_TRUE(matches_finite_differences("dbias", pass.gradients.at("dbias"), k.bias, loss));
    }
  }
}

// The same code in float: a mistake in the single-precision BLAS call would not show in double.
TEST(Matmul, FloatBackwardMatchesDouble) {
  const MatmulCase k = make_matmul_case(9, 17, 6, true, 3);
  EXPECT_TRUE(all_close(run<float>(k).gradients, run<double>(k).gradients, {1e-5, 1e-5}));
}

TEST(Matmul, BackwardAccumulates) {
  const MatmulCase k = make_matmul_case(6, 5, 4, true, 4);
  EXPECT_TRUE(all_close(run<double>(k, 2).gradients, scaled(run<double>(k, 1).gradients, 2), {1e-14, 1e-14}));
}

TEST(Matmul, BitsDoNotDependOnThreadCount) {
  const MatmulCase k = make_matmul_case(96, 128, 160, true, 5);
  expect_identical_bits_for_any_thread_count([&] { return run<float>(k); });
}

TEST(Matmul, RejectsWrongSizes) {
  std::vector<float> out(6), inp(6), weight(4), bias(2);
  EXPECT_NO_THROW(matmul_forward<float>(out, inp, weight, bias, 3, 2, 2));
  EXPECT_THROW(matmul_forward<float>(out, inp, weight, bias, 3, 2, 3), std::invalid_argument);
  EXPECT_THROW(matmul_forward<float>(out, inp, weight, std::vector<float>(3), 3, 2, 2), std::invalid_argument);
  EXPECT_THROW(matmul_forward<float>({}, {}, {}, {}, 0, 2, 2), std::invalid_argument);
}

}  // namespace
