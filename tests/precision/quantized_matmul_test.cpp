// A fake-quantized Linear layer against a double-precision reference on the same quantized
// operands: Y = X_q·W_qᵀ, dX = dY_q·W_q, dW = dY_qᵀ·X_q (straight-through estimator), with the
// operands quantized here independently, value by value, through the scalar codec.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "format/philox.hpp"
#include "format/accumulator.hpp"
#include "model/linear.hpp"
#include "ops/cpu/emulated_gemm.hpp"
#include "ops/cpu/cpu_backend.hpp"
#include "precision/quant_hooks.hpp"
#include "support/one_block_model.hpp"
#include "tensor_grid.hpp"

namespace altgrad::precision {
namespace {

using precision_test::Grid;
using precision_test::grid_of;

// E4M3 forward and E5M2 backward, each tensor scaled by its own amax.
recipe::Recipe tensor_scaled_recipe(const model::MatmulPoints& points) {
  recipe::RecipeSpec spec;
  const auto role = [&](recipe::Role r, const char* format) {
    recipe::SettingsPatch patch;
    patch.format = format;
    patch.scaling = quant::Scaling::tensor;
    patch.apply_to(spec.roles[static_cast<std::size_t>(r)], "test");
  };
  role(recipe::Role::act, "e4m3");
  role(recipe::Role::weight, "e4m3");
  role(recipe::Role::grad, "e5m2");
  return recipe::Recipe{"test", 1, recipe::resolve(spec, recipe::recipe_points(points))};
}

std::vector<float> values_with_outliers(std::size_t n, std::uint64_t stream, float magnitude) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = format::philox_word(42, stream, i) / 4294967296.0;
    v[i] = static_cast<float>(magnitude * (2.0 * u - 1.0) * (1.0 + 30.0 * (i % 17 == 0)));  // a few outliers
  }
  return v;
}

// x̂ = Q(x·s)/s with s = max_finite / amax rounded once to FP32, as docs/formats.md defines it.
std::vector<double> quantized(const std::vector<float>& x, const char* format_name) {
  const format::Format f = format::make_format(format::parse_format(format_name));
  float amax = 0;
  for (const float v : x) amax = std::max(amax, std::fabs(v));
  const float s = static_cast<float>(static_cast<double>(f.max_finite()) / static_cast<double>(amax));
  std::vector<double> q(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    q[i] = static_cast<double>(format::decode(f, format::encode(f, format::Rounding::nearest_even, x[i] * s)) / s);
  }
  return q;
}

void expect_close(std::span<const float> got, const std::vector<double>& want, const char* what) {
  double scale = 0;
  for (const double w : want) scale = std::max(scale, std::fabs(w));
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 2e-6 * scale) << what << "[" << i << "]";
  }
}

// One forward and backward pass of block 0's c_fc (N = 24 tokens) under `recipe`'s hooks, on fixed
// random operands with a few outliers.
struct LayerPass {
  std::size_t N = 24, C, OC;
  std::vector<float> x, w, dy, y, x_copy, w_copy, dy_copy, dx, dw;
  model::LinearInputs<float> used;  // spans into x_copy and w_copy (or x and w)

  LayerPass(const model::MatmulPoints& points, const recipe::Recipe& recipe) {
    precision::QuantHooks hooks(points, recipe);
    hooks.begin_step(0, false);
    const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);
    C = fc.in_features;
    OC = fc.out_features;
    x = values_with_outliers(N * C, 0, 1.5f);
    w = values_with_outliers(OC * C, 1, 0.05f);
    dy = values_with_outliers(N * OC, 2, 1e-4f);
    y.resize(N * OC);
    x_copy.resize(N * C);
    w_copy.resize(OC * C);
    dy_copy.resize(N * OC);
    dx.assign(N * C, 0.0f);
    dw.assign(OC * C, 0.0f);
    used = model::linear_forward<float>(ops::cpu::kernels<float>(), y, x, w, {}, x_copy, w_copy, fc, &hooks, N);
    model::linear_backward<float>(ops::cpu::kernels<float>(), dx, dw, {}, dy, used, {dy_copy, {}, {}, {}}, fc, &hooks,
                                  N);
  }
  LayerPass(const LayerPass&) = delete;  // `used` points into this object's vectors
};

TEST(QuantizedMatmul, ForwardAndBackwardEqualADoubleReferenceOnTheQuantizedOperands) {
  const model::MatmulPoints points(test_support::one_block_model(2, 16, 8));
  const LayerPass pass(points, tensor_scaled_recipe(points));
  const auto& [N, C, OC, x, w, dy, y, x_copy, w_copy, dy_copy, dx, dw, used] = pass;

  const std::vector<double> xq = quantized(x, "e4m3"), wq = quantized(w, "e4m3"), dyq = quantized(dy, "e5m2");
  std::vector<double> y_ref(N * OC, 0.0), dx_ref(N * C, 0.0), dw_ref(OC * C, 0.0);
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t o = 0; o < OC; ++o) {
      for (std::size_t c = 0; c < C; ++c) {
        y_ref[n * OC + o] += xq[n * C + c] * wq[o * C + c];
        dx_ref[n * C + c] += dyq[n * OC + o] * wq[o * C + c];
        dw_ref[o * C + c] += dyq[n * OC + o] * xq[n * C + c];
      }
    }
  }
  expect_close(y, y_ref, "Y");
  expect_close(dx, dx_ref, "dX");
  expect_close(dw, dw_ref, "dW");
  // The operands the kernels read are exactly the independently quantized values.
  for (std::size_t i = 0; i < xq.size(); ++i) ASSERT_EQ(static_cast<double>(used.inp[i]), xq[i]) << i;
  for (std::size_t i = 0; i < wq.size(); ++i) ASSERT_EQ(static_cast<double>(used.weight[i]), wq[i]) << i;
}

// Under Hopper's accumulation each GEMM multiplies the operands' grid values and applies
// fl32(1/s_a · 1/s_b) to the sum, as cuBLASLt does: the layer against the emulated GEMM run here on
// independently quantized grid values (unit scales), GEMM by GEMM, bit for bit.
TEST(QuantizedMatmul, UnderHopperAccumulationEachGemmMultipliesGridValuesAndAppliesTheScales) {
  const model::MatmulPoints points(test_support::one_block_model(2, 16, 8));
  recipe::Recipe recipe = tensor_scaled_recipe(points);
  const format::AccumulatorModel hopper = format::parse_accumulator("hopper");
  recipe.accumulate = {hopper, hopper, hopper};
  const LayerPass pass(points, recipe);
  const auto& [N, C, OC, x, w, dy, y, x_copy, w_copy, dy_copy, dx, dw, used] = pass;

  const Grid gx = grid_of(x, "e4m3"), gw = grid_of(w, "e4m3"), gdy = grid_of(dy, "e5m2");
  const int e4m3 = -6, e5m2 = -14;  // the formats' emin
  const auto reference = [&](std::size_t m, std::size_t n, std::size_t k, ops::cpu::EmulatedOperand a,
                             ops::cpu::EmulatedOperand b, float sa, float sb) {
    std::vector<float> out(m * n);
    ops::cpu::emulated_gemm_general(hopper, m, n, k, a, b, (1.0f / sa) * (1.0f / sb), false, out.data(), n);
    return out;
  };
  // Y = X·Wᵀ; dX = dY·W; dW = dYᵀ·X (operands as strided views of the row-major grids).
  const std::vector<float> y_ref = reference(N, OC, C, {gx.values.data(), C, 1, e4m3}, {gw.values.data(), 1, C, e4m3},
                                             gx.scale, gw.scale);
  const std::vector<float> dx_ref = reference(N, C, OC, {gdy.values.data(), OC, 1, e5m2},
                                              {gw.values.data(), C, 1, e4m3}, gdy.scale, gw.scale);
  const std::vector<float> dw_ref = reference(OC, C, N, {gdy.values.data(), 1, OC, e5m2},
                                              {gx.values.data(), C, 1, e4m3}, gdy.scale, gx.scale);
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], y_ref[i]) << "Y[" << i << "]";
  for (std::size_t i = 0; i < dx.size(); ++i) ASSERT_EQ(dx[i], dx_ref[i]) << "dX[" << i << "]";
  for (std::size_t i = 0; i < dw.size(); ++i) ASSERT_EQ(dw[i], dw_ref[i]) << "dW[" << i << "]";
}

}  // namespace
}  // namespace altgrad::precision
