#include "ops/cpu/residual.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "ops/cpu/parallel.hpp"
#include "ops/determinism.hpp"
#include "ops/finite_difference.hpp"
#include "ops/test_tensors.hpp"

namespace {

using namespace altgrad::ops::cpu;
using namespace altgrad::ops_test;

struct ResidualCase {
  std::vector<double> a, b, dout;
};

ResidualCase make_residual_case(std::size_t n, std::uint64_t seed) {
  return {random_values(n, seed), random_values(n, seed + 1), random_values(n, seed + 2)};
}

template <typename Scalar>
Pass<Scalar> run(const ResidualCase& k, int backward_calls = 1) {
  const auto a = converted<Scalar>(k.a);
  const auto b = converted<Scalar>(k.b);
  const auto dout = converted<Scalar>(k.dout);
  std::vector<Scalar> out(a.size()), da(a.size()), db(a.size());
  residual_forward<Scalar>(out, a, b);
  for (int i = 0; i < backward_calls; ++i) residual_backward<Scalar>(da, db, dout);
  return {{{"out", out}}, {{"da", da}, {"db", db}}};
}

TEST(Residual, ForwardAddsAndBackwardPassesGradientToBoth) {
  const ResidualCase k = make_residual_case(50, 1);
  const Pass<double> pass = run<double>(k);
  for (std::size_t i = 0; i < k.a.size(); ++i) ASSERT_EQ(pass.outputs.at("out")[i], k.a[i] + k.b[i]) << i;
  EXPECT_TRUE(bit_identical(pass.gradients.at("da"), k.dout)) << "da";
  EXPECT_TRUE(bit_identical(pass.gradients.at("db"), k.dout)) << "db";
}

TEST(Residual, GradientsMatchFiniteDifferences) {
  ResidualCase k = make_residual_case(10, 2);
  const Pass<double> pass = run<double>(k);
  std::vector<double> out(k.a.size());
  const auto loss = [&] {
    residual_forward<double>(out, k.a, k.b);
    return dot(k.dout, out);
  };
  EXPECT_TRUE(matches_finite_differences("da", pass.gradients.at("da"), k.a, loss));
  EXPECT_TRUE(matches_finite_differences("db", pass.gradients.at("db"), k.b, loss));
}

TEST(Residual, WorksInPlace) {
  std::vector<float> x = {1.0f, 2.0f};
  const std::vector<float> branch = {0.5f, -4.0f};
  residual_forward<float>(x, x, branch);
  EXPECT_EQ(x, (std::vector<float>{1.5f, -2.0f}));
}

TEST(Residual, BackwardAccumulates) {
  const ResidualCase k = make_residual_case(20, 3);
  EXPECT_TRUE(all_close(run<double>(k, 2).gradients, scaled(run<double>(k, 1).gradients, 2), {0, 0}));
}

TEST(Residual, BitsDoNotDependOnThreadCount) {
  constexpr std::size_t n = 20000;
  static_assert(n >= kMinParallelWork, "large enough to run in parallel");
  const ResidualCase k = make_residual_case(n, 4);
  expect_identical_bits_for_any_thread_count([&] { return run<float>(k); });
}

TEST(Residual, RejectsWrongSizes) {
  std::vector<float> out(3), a(3), b(2);
  EXPECT_THROW(residual_forward<float>(out, a, b), std::invalid_argument);
  EXPECT_THROW(residual_backward<float>(out, b, a), std::invalid_argument);
}

}  // namespace
