#include "ops/cpu/swiglu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ops/cpu/parallel.hpp"
#include "ops/determinism.hpp"
#include "ops/finite_difference.hpp"
#include "ops/test_tensors.hpp"

namespace {

using namespace altgrad::ops::cpu;
using namespace altgrad::ops_test;

struct SwigluCase {
  std::size_t N, H;
  std::vector<double> inp, dout;  // inp rows are [a (H) | b (H)]
};

SwigluCase make_swiglu_case(std::size_t N, std::size_t H, std::uint64_t seed) {
  return {N, H, random_values(N * 2 * H, seed, -4.0, 4.0), random_values(N * H, seed + 1)};
}

// silu(a) · b with silu(a) = a / (1 + e^−a), and its partial derivatives, in long double.
struct Reference {
  std::vector<double> out, dinp;
};

Reference reference(const SwigluCase& k) {
  Reference r{std::vector<double>(k.N * k.H), std::vector<double>(k.N * 2 * k.H)};
  for (std::size_t n = 0; n < k.N; ++n) {
    for (std::size_t i = 0; i < k.H; ++i) {
      const long double a = k.inp[n * 2 * k.H + i];
      const long double b = k.inp[n * 2 * k.H + k.H + i];
      const long double sigmoid = 1 / (1 + std::exp(-a));
      const long double dy = k.dout[n * k.H + i];
      r.out[n * k.H + i] = static_cast<double>(a * sigmoid * b);
      r.dinp[n * 2 * k.H + i] = static_cast<double>(dy * b * (sigmoid + a * sigmoid * (1 - sigmoid)));
      r.dinp[n * 2 * k.H + k.H + i] = static_cast<double>(dy * a * sigmoid);
    }
  }
  return r;
}

template <typename Scalar>
Pass<Scalar> run(const SwigluCase& k, Scalar stale_gradient = 0) {
  const auto inp = converted<Scalar>(k.inp);
  const auto dout = converted<Scalar>(k.dout);
  std::vector<Scalar> out(k.N * k.H), dinp(inp.size(), stale_gradient);
  swiglu_forward<Scalar>(out, inp, k.N, k.H);
  swiglu_backward<Scalar>(dinp, inp, dout, k.N, k.H);
  return {{{"out", out}}, {{"dinp", dinp}}};
}

template <typename Scalar>
class SwiGluTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SwiGluTyped, ScalarTypes);

TYPED_TEST(SwiGluTyped, MatchesFormula) {
  const SwigluCase k = make_swiglu_case(5, 12, 1);
  const Reference r = reference(k);
  const Pass<TypeParam> pass = run<TypeParam>(k);
  EXPECT_TRUE(all_close("out", pass.outputs.at("out"), r.out, kReferenceTolerance<TypeParam>));
  EXPECT_TRUE(all_close("dinp", pass.gradients.at("dinp"), r.dinp, kReferenceTolerance<TypeParam>));
}

// The layout: the first half of a row is the gate. silu(1) = 1 / (1 + e^−1) = 0.7310585786300049.
TEST(SwiGlu, FirstHalfIsTheGate) {
  const std::vector<double> inp = {1.0, 0.0, 3.0, 2.0};  // a = (1, 0), b = (3, 2)
  std::vector<double> out(2);
  swiglu_forward<double>(out, inp, 1, 2);
  EXPECT_NEAR(out[0], 3 * 0.7310585786300049, 1e-15);
  EXPECT_EQ(out[1], 0.0);  // silu(0) = 0, whatever b is
}

TEST(SwiGlu, StaysFiniteForLargeGates) {
  const std::vector<float> inp = {-200.0f, 200.0f, 1.0f, 1.0f};
  std::vector<float> out(2), dinp(4);
  swiglu_forward<float>(out, inp, 1, 2);
  swiglu_backward<float>(dinp, inp, std::vector<float>{1.0f, 1.0f}, 1, 2);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 200.0f);
  for (const float d : dinp) EXPECT_TRUE(std::isfinite(d));
}

TEST(SwiGlu, GradientMatchesFiniteDifferences) {
  SwigluCase k = make_swiglu_case(3, 5, 2);
  const Pass<double> pass = run<double>(k);
  std::vector<double> out(k.N * k.H);
  const auto loss = [&] {
    swiglu_forward<double>(out, k.inp, k.N, k.H);
    return dot(k.dout, out);
  };
  EXPECT_TRUE(matches_finite_differences("dinp", pass.gradients.at("dinp"), k.inp, loss));
}

TEST(SwiGlu, BackwardOverwritesItsGradient) {
  const SwigluCase k = make_swiglu_case(3, 6, 3);
  const double stale = std::numeric_limits<double>::quiet_NaN();  // what an adding kernel would keep
  EXPECT_TRUE(all_close(run<double>(k, stale).gradients, run<double>(k).gradients, {0, 0}));
}

TEST(SwiGlu, BitsDoNotDependOnThreadCount) {
  constexpr std::size_t N = 64, H = 320;
  static_assert(N * H >= kMinParallelWork, "large enough to run in parallel");
  const SwigluCase k = make_swiglu_case(N, H, 4);
  expect_identical_bits_for_any_thread_count([&] { return run<float>(k); });
}

TEST(SwiGlu, RejectsWrongSizes) {
  std::vector<float> out(2), inp(6);
  EXPECT_NO_THROW(swiglu_forward<float>(out, std::vector<float>(4), 1, 2));
  EXPECT_THROW(swiglu_forward<float>(out, inp, 1, 2), std::invalid_argument);
}

}  // namespace
