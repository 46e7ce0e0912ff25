// Per-tensor scaling (none, tensor, delayed) keeps one quantized copy of each operand, whatever
// GEMM reads it, as Transformer Engine does: dX and dW are bit for bit the GEMMs on the forward's
// X and W copies and one dY copy, each point quantizes once per step, and nothing is counted as a
// column-wise copy. The bias gradient, for these recipes too, is the row sum of the unquantized dY.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "format/philox.hpp"
#include "model/linear.hpp"
#include "ops/cpu/cpu_backend.hpp"
#include "ops/cpu/matmul.hpp"
#include "precision/quant_hooks.hpp"
#include "support/bit_identical.hpp"
#include "support/one_block_model.hpp"

namespace altgrad::precision {
namespace {

// E4M3 forward, E5M2 backward with stochastic rounding (so that the words each copy draws matter).
recipe::Recipe per_tensor_recipe(const model::MatmulPoints& points, quant::Scaling scaling) {
  recipe::RecipeSpec spec;
  const auto role = [&](recipe::Role r, const char* format, format::Rounding rounding) {
    recipe::SettingsPatch patch;
    patch.format = format;
    patch.scaling = scaling;
    patch.rounding = rounding;
    patch.apply_to(spec.roles[static_cast<std::size_t>(r)], "test");
  };
  role(recipe::Role::act, "e4m3", format::Rounding::nearest_even);
  role(recipe::Role::weight, "e4m3", format::Rounding::nearest_even);
  role(recipe::Role::grad, "e5m2", format::Rounding::stochastic);
  return recipe::Recipe{"test", 3, recipe::resolve(spec, recipe::recipe_points(points))};
}

std::vector<float> random_values(std::size_t n, std::uint64_t stream, float magnitude) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(magnitude * (2.0 * (format::philox_word(5, stream, i) / 4294967296.0) - 1.0));
  }
  return v;
}

class PerTensorReuse : public ::testing::TestWithParam<quant::Scaling> {};

TEST_P(PerTensorReuse, BackwardGemmsReadTheForwardCopiesAndBiasSumsTheUnquantizedGradient) {
  const model::MatmulPoints points(test_support::one_block_model(2, 48, 64));
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);
  const std::size_t N = 40, C = fc.in_features, OC = fc.out_features;
  const std::vector<float> x = random_values(N * C, 0, 1.5f), w = random_values(OC * C, 1, 0.05f),
                           dy = random_values(N * OC, 2, 0.01f);

  // Through linear_backward, with room for every copy it could ask for.
  precision::QuantHooks hooks(points, per_tensor_recipe(points, GetParam()));
  hooks.begin_step(0, false);
  std::vector<float> y(N * OC), x_copy(N * C), w_copy(OC * C), dx(N * C, 0.0f), dw(OC * C, 0.0f), db(OC, 0.0f);
  std::vector<float> dy_rows(N * OC), dy_columns(N * OC), x_columns(N * C), w_columns(OC * C);
  const auto used =
      model::linear_forward<float>(ops::cpu::kernels<float>(), y, x, w, {}, x_copy, w_copy, fc, &hooks, N);
  model::linear_backward<float>(ops::cpu::kernels<float>(), dx, dw, db, dy, used,
                                {dy_rows, dy_columns, x_columns, w_columns}, fc, &hooks, N);

  // By hand: one dY copy, then both GEMMs on the forward's copies.
  precision::QuantHooks again(points, per_tensor_recipe(points, GetParam()));
  again.begin_step(0, false);
  std::vector<float> y2(N * OC), x2(N * C), w2(OC * C), dy_q(N * OC), dx2(N * C, 0.0f), dw2(OC * C, 0.0f);
  const auto used2 = model::linear_forward<float>(ops::cpu::kernels<float>(), y2, x, w, {}, x2, w2, fc, &again, N);
  const std::size_t grad_index = fc.index * model::kOperandsPerMatmul + 2;
  again.apply({fc.operand_name(model::Operand::grad), fc.name, model::Operand::grad, grad_index, N, OC}, dy, dy_q);
  ops::cpu::matmul_backward<float>(dx2, dw2, {}, dy_q, used2.inp, used2.weight, N, C, OC);
  EXPECT_TRUE(test_support::bit_identical(dx, dx2));
  EXPECT_TRUE(test_support::bit_identical(dw, dw2));

  for (std::size_t operand = 0; operand < model::kOperandsPerMatmul; ++operand) {
    const quant::PointQuantizer* point = hooks.point(fc.index * model::kOperandsPerMatmul + operand);
    EXPECT_EQ(point->step_stats().calls, 1u) << operand;
    EXPECT_EQ(point->column_stats().calls, 0u) << operand;
  }

  double gap_to_quantized = 0, scale = 0;
  for (std::size_t o = 0; o < OC; ++o) {
    double sum = 0, sum_quantized = 0;
    for (std::size_t n = 0; n < N; ++n) {
      sum += dy[n * OC + o];
      sum_quantized += dy_q[n * OC + o];
    }
    ASSERT_NEAR(db[o], sum, 1e-6) << o;
    gap_to_quantized = std::max(gap_to_quantized, std::fabs(sum - sum_quantized));
    scale = std::max(scale, std::fabs(sum));
  }
  EXPECT_GT(gap_to_quantized, 1e-4 * scale);  // the quantized copy would have given another bias gradient
}

INSTANTIATE_TEST_SUITE_P(Scalings, PerTensorReuse,
                         ::testing::Values(quant::Scaling::none, quant::Scaling::tensor, quant::Scaling::delayed));

}  // namespace
}  // namespace altgrad::precision
