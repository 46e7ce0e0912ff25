#include "ops/cpu/gelu.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
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

struct GeluCase {
  std::vector<double> inp, dout;
};

// Inputs over [-5, 5]: both tails, where erf saturates, and the curved middle.
GeluCase make_gelu_case(std::size_t n, std::uint64_t seed) {
  return {random_values(n, seed, -5.0, 5.0), random_values(n, seed + 1)};
}

// x · Φ(x), Φ from erfc in long double.
long double reference_gelu(long double x) { return x * 0.5L * std::erfc(-x / std::sqrt(2.0L)); }

// Φ(x) + x·φ(x).
long double reference_gelu_derivative(long double x) {
  const long double density = std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi_v<long double>);
  return 0.5L * std::erfc(-x / std::sqrt(2.0L)) + x * density;
}

template <typename Scalar>
Pass<Scalar> run(const GeluCase& k, Scalar stale_gradient = 0) {
  const auto inp = converted<Scalar>(k.inp);
  const auto dout = converted<Scalar>(k.dout);
  std::vector<Scalar> out(inp.size()), dinp(inp.size(), stale_gradient);
  gelu_forward<Scalar>(out, inp);
  gelu_backward<Scalar>(dinp, inp, dout);
  return {{{"out", out}}, {{"dinp", dinp}}};
}

template <typename Scalar>
class GeluTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GeluTyped, ScalarTypes);

TYPED_TEST(GeluTyped, MatchesFormula) {
  const GeluCase k = make_gelu_case(200, 1);
  std::vector<double> out(k.inp.size()), dinp(k.inp.size());
  for (std::size_t i = 0; i < k.inp.size(); ++i) {
    out[i] = static_cast<double>(reference_gelu(k.inp[i]));
    dinp[i] = static_cast<double>(k.dout[i] * reference_gelu_derivative(k.inp[i]));
  }
  const Pass<TypeParam> pass = run<TypeParam>(k);
  EXPECT_TRUE(all_close("out", pass.outputs.at("out"), out, kReferenceTolerance<TypeParam>));
  EXPECT_TRUE(all_close("dinp", pass.gradients.at("dinp"), dinp, kReferenceTolerance<TypeParam>));
}

// Values of the standard normal CDF from tables: gelu(x) = x·Φ(x). These pin the erf form; the tanh
// approximation misses gelu(1) by 1.5e-4 and gelu(-3) by 4e-4.
TYPED_TEST(GeluTyped, KnownValues) {
  const std::vector<double> inp = {0.0, 1.0, -1.0, 2.0, -3.0};
  const std::vector<double> want = {0.0, 0.8413447460685429, -0.15865525393145705, 2 * 0.9772498680518208,
                                    -3 * 0.0013498980316300946};
  std::vector<TypeParam> out(inp.size());
  gelu_forward<TypeParam>(out, converted<TypeParam>(inp));
  EXPECT_TRUE(all_close("gelu", out, want, kReferenceTolerance<TypeParam>));
}

TEST(Gelu, GradientMatchesFiniteDifferences) {
  GeluCase k = make_gelu_case(40, 2);
  const Pass<double> pass = run<double>(k);
  std::vector<double> out(k.inp.size());
  const auto loss = [&] {
    gelu_forward<double>(out, k.inp);
    return dot(k.dout, out);
  };
  EXPECT_TRUE(matches_finite_differences("dinp", pass.gradients.at("dinp"), k.inp, loss));
}

TEST(Gelu, BackwardOverwritesItsGradient) {
  const GeluCase k = make_gelu_case(30, 3);
  const double stale = std::numeric_limits<double>::quiet_NaN();  // what an adding kernel would keep
  EXPECT_TRUE(all_close(run<double>(k, stale).gradients, run<double>(k).gradients, {0, 0}));
}

TEST(Gelu, BitsDoNotDependOnThreadCount) {
  constexpr std::size_t n = 20000;
  static_assert(n >= kMinParallelWork, "large enough to run in parallel");
  const GeluCase k = make_gelu_case(n, 4);
  expect_identical_bits_for_any_thread_count([&] { return run<float>(k); });
}

TEST(Gelu, RejectsWrongSizes) {
  std::vector<float> out(3), inp(4);
  EXPECT_THROW(gelu_forward<float>(out, inp), std::invalid_argument);
  EXPECT_THROW(gelu_backward<float>(out, inp, inp), std::invalid_argument);
}

}  // namespace

namespace altgrad::ops::cpu {
namespace {

// The float path uses its own exp and erf approximations: sweep them across the whole range where
// GELU is not trivially 0 or x, against libm in long double.
TEST(GeluFloat, AgreesWithTheExactFormAcrossTheRange) {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 1.0f / 1024) x.push_back(v);
  std::vector<float> out(x.size()), dinp(x.size(), 0.0f);
  const std::vector<float> ones(x.size(), 1.0f);
  gelu_forward<float>(out, x);
  gelu_backward<float>(dinp, x, ones);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double v = x[i];
    const long double cdf = 0.5L * (1.0L + std::erf(v / std::sqrt(2.0L)));
    const long double density = std::exp(-0.5L * v * v) / std::sqrt(2.0L * 3.14159265358979323846L);
    ASSERT_NEAR(out[i], v * cdf, 1e-6 + 1e-6 * std::fabs(v * cdf)) << "gelu(" << x[i] << ")";
    ASSERT_NEAR(dinp[i], cdf + v * density, 1e-6) << "gelu'(" << x[i] << ")";
  }
}

// Far in the negative tail gelu'(x) is below float's range (gelu'(-20) ≈ -5e-87): a dead unit passes
// back an exact zero, as a float64 computation rounded to float does, so that the gradient's
// zero fraction counts it (docs/quantization.md, zero_in_pct).
TEST(GeluFloat, DeadTailPassesBackExactZeros) {
  const std::vector<float> x = {-14.0f, -20.0f, -100.0f};
  std::vector<float> out(x.size()), dinp(x.size(), 0.0f);
  const std::vector<float> ones(x.size(), 1.0f);
  gelu_forward<float>(out, x);
  gelu_backward<float>(dinp, x, ones);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(out[i], 0.0f) << "gelu(" << x[i] << ")";
    EXPECT_EQ(dinp[i], 0.0f) << "gelu'(" << x[i] << ")";
  }
}

// Whole registers of lanes and the elements left over take the same arithmetic: each value gives
// the same bits in a long array (mostly registers) as alone (the one-at-a-time path), dead tail
// and signed zeros included.
TEST(GeluFloat, RegistersGiveTheBitsOfOneValueAlone) {
  std::vector<float> x = {-100.0f, -20.0f, -14.0f, -0.0f, 0.0f, 1e-30f, -1e-30f, 40.0f};
  for (float v = -9.0f; x.size() < 67; v += 0.2913f) x.push_back(v);
  std::vector<float> out(x.size()), dinp(x.size()), dy(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) dy[i] = 0.75f + 0.01f * static_cast<float>(i);
  gelu_forward<float>(out, x);
  gelu_backward<float>(dinp, x, dy);
  for (std::size_t i = 0; i < x.size(); ++i) {
    float alone = 0, alone_grad = 0;
    gelu_forward<float>({&alone, 1}, {&x[i], 1});
    gelu_backward<float>({&alone_grad, 1}, {&x[i], 1}, {&dy[i], 1});
    EXPECT_EQ(std::bit_cast<std::uint32_t>(out[i]), std::bit_cast<std::uint32_t>(alone)) << "gelu(" << x[i] << ")";
    EXPECT_EQ(std::bit_cast<std::uint32_t>(dinp[i]), std::bit_cast<std::uint32_t>(alone_grad)) << "gelu'(" << x[i] << ")";
  }
}

}  // namespace
}  // namespace altgrad::ops::cpu
