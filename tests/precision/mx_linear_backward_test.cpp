// A Linear layer under MX block scaling against the spec: every GEMM's operands blocked along that
// GEMM's own reduction dimension (tests/precision/mx_reference.hpp), in double:
//   Y  = X_r · W_rᵀ        X, W blocked along C (the in features)
//   dX = dY_r · W_c        dY blocked along OC, W down its OC rows
//   dW = dY_cᵀ · X_c       dY and X blocked down the N tokens
//   db = Σ_n dY            unquantized
// and the gradients the forward pass's copies would give (the axis the backward pass used to
// reuse) are measurably different.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "format/philox.hpp"
#include "model/linear.hpp"
#include "mx_reference.hpp"
#include "ops/cpu/cpu_backend.hpp"
#include "precision/quant_hooks.hpp"

namespace altgrad::precision {
namespace {

using precision_test::relative_gap;

using precision_test::MxAxis;
using precision_test::mx_reference;

model::GptConfig model_with_width(std::size_t n_embd, std::size_t n_head) {
  model::GptConfig c;
  c.n_layer = 1;
  c.n_head = n_head;
  c.n_embd = n_embd;
  c.block_size = 64;
  c.vocab_size = 256;
  return c;
}

// E4M3 activations and weights, E5M2 gradients (OCP MXFP8), blocks of 32, nearest-even.
recipe::Recipe mx_recipe(const model::MatmulPoints& points, bool with_attention) {
  recipe::RecipeSpec spec;
  const auto role = [&](recipe::Role r, const char* format) {
    recipe::SettingsPatch patch;
    patch.format = format;
    patch.scaling = quant::Scaling::block;
    patch.block = 32;
    patch.apply_to(spec.roles[static_cast<std::size_t>(r)], "test");
  };
  role(recipe::Role::act, "e4m3");
  role(recipe::Role::weight, "e4m3");
  role(recipe::Role::grad, "e5m2");
  if (with_attention) {
    recipe::SettingsPatch on;
    on.enabled = true;
    spec.overrides.push_back({"h.*.attn.[qkvp]*", on, "test", std::nullopt});
  }
  return recipe::Recipe{"test", 1, recipe::resolve(spec, recipe::recipe_points(points))};
}

// Σ_n dY[n, o] of dY as given and of its quantized copy.
struct BiasSums {
  std::vector<double> unquantized, quantized;
};
BiasSums bias_sums(const std::vector<float>& dy, const std::vector<double>& dy_quantized, std::size_t N,
                   std::size_t OC) {
  BiasSums sums{std::vector<double>(OC), std::vector<double>(OC)};
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t o = 0; o < OC; ++o) {
      sums.unquantized[o] += dy[n * OC + o];
      sums.quantized[o] += dy_quantized[n * OC + o];
    }
  }
  return sums;
}

struct LinearCase {
  std::size_t N, C, OC;
  std::vector<float> x, w, dy;
};

struct Gradients {
  std::vector<double> y, dx, dw;
};

// Y = Xf·Wfᵀ, dX = dYa·Wb, dW = dYbᵀ·Xb, on dequantized operands in double.
Gradients products(const LinearCase& k, const std::vector<double>& xf, const std::vector<double>& wf,
                   const std::vector<double>& dya, const std::vector<double>& wb, const std::vector<double>& dyb,
                   const std::vector<double>& xb) {
  Gradients g{std::vector<double>(k.N * k.OC), std::vector<double>(k.N * k.C), std::vector<double>(k.OC * k.C)};
  for (std::size_t n = 0; n < k.N; ++n) {
    for (std::size_t o = 0; o < k.OC; ++o) {
      for (std::size_t c = 0; c < k.C; ++c) {
        g.y[n * k.OC + o] += xf[n * k.C + c] * wf[o * k.C + c];
        g.dx[n * k.C + c] += dya[n * k.OC + o] * wb[o * k.C + c];
        g.dw[o * k.C + c] += dyb[n * k.OC + o] * xb[n * k.C + c];
      }
    }
  }
  return g;
}

TEST(MxLinearBackward, EveryGemmBlocksItsOperandsAlongItsOwnReductionDimension) {
  // C = 48 and N = 40 end in partial blocks (32 + 16, 32 + 8); OC = 192 is six whole blocks.
  const model::MatmulPoints points(model_with_width(48, 2));
  precision::QuantHooks hooks(points, mx_recipe(points, false));
  hooks.begin_step(0, false);
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);
  LinearCase k{40, fc.in_features, fc.out_features, {}, {}, {}};
  ASSERT_EQ(k.C, 48u);
  ASSERT_EQ(k.OC, 192u);
  k.x = precision_test::graded_values(k.N, k.C, 99, 0, 1.5, 11);
  k.w = precision_test::graded_values(k.OC, k.C, 99, 1, 0.05, 11);
  k.dy = precision_test::graded_values(k.N, k.OC, 99, 2, 1e-4, 11);

  std::vector<float> y(k.N * k.OC), x_copy(k.N * k.C), w_copy(k.OC * k.C), dx(k.N * k.C, 0.0f), dw(k.OC * k.C, 0.0f),
      db(k.OC, 0.0f);
  std::vector<float> dy_rows(k.N * k.OC), dy_columns(k.N * k.OC), x_columns(k.N * k.C), w_columns(k.OC * k.C);
  const auto used =
      model::linear_forward<float>(ops::cpu::kernels<float>(), y, k.x, k.w, {}, x_copy, w_copy, fc, &hooks, k.N);
  model::linear_backward<float>(ops::cpu::kernels<float>(), dx, dw, db, k.dy, used,
                                {dy_rows, dy_columns, x_columns, w_columns}, fc, &hooks, k.N);

  const std::vector<double> x_r = mx_reference(k.x, k.N, k.C, MxAxis{false, k.C}, "e4m3");
  const std::vector<double> w_r = mx_reference(k.w, k.OC, k.C, MxAxis{false, k.C}, "e4m3");
  const std::vector<double> dy_r = mx_reference(k.dy, k.N, k.OC, MxAxis{false, k.OC}, "e5m2");
  const std::vector<double> w_c = mx_reference(k.w, k.OC, k.C, MxAxis{true, k.OC}, "e4m3");
  const std::vector<double> dy_c = mx_reference(k.dy, k.N, k.OC, MxAxis{true, k.N}, "e5m2");
  const std::vector<double> x_c = mx_reference(k.x, k.N, k.C, MxAxis{true, k.N}, "e4m3");
  const Gradients want = products(k, x_r, w_r, dy_r, w_c, dy_c, x_c);
  constexpr double kTolerance = 1e-5;  // float accumulation of exactly quantized operands
  EXPECT_LT(relative_gap(y, want.y), kTolerance);
  EXPECT_LT(relative_gap(dx, want.dx), kTolerance);
  EXPECT_LT(relative_gap(dw, want.dw), kTolerance);

  // The backward GEMMs on the forward's copies, as they were before: far off.
  const Gradients reused = products(k, x_r, w_r, dy_r, w_r, dy_r, x_r);
  EXPECT_GT(relative_gap(dx, reused.dx), 100 * kTolerance);
  EXPECT_GT(relative_gap(dw, reused.dw), 100 * kTolerance);

  // The bias gradient sums dY as it arrived, not a quantized copy.
  const BiasSums sums = bias_sums(k.dy, dy_r, k.N, k.OC);
  EXPECT_LT(relative_gap(db, sums.unquantized), kTolerance);
  EXPECT_GT(relative_gap(db, sums.quantized), 100 * kTolerance);

  // Statistics: the row-wise copies (X and W forward, dY for dX) under the point's own keys, the
  // column-wise ones (X and dY for dW, W for dX) apart.
  for (const model::Operand operand : {model::Operand::act, model::Operand::weight, model::Operand::grad}) {
    const quant::PointQuantizer* point = hooks.point(fc.index * model::kOperandsPerMatmul + static_cast<std::size_t>(operand));
    ASSERT_NE(point, nullptr);
    EXPECT_EQ(point->step_stats().calls, 1u);
    EXPECT_EQ(point->column_stats().calls, 1u);
  }
  const quant::PointQuantizer* grad = hooks.point(fc.index * model::kOperandsPerMatmul + 2);
  EXPECT_EQ(grad->step_stats().blocks, k.N * (k.OC / 32));
  EXPECT_EQ(grad->column_stats().blocks, k.OC * 2);  // 40 tokens: blocks of 32 and 8
}

}  // namespace
}  // namespace altgrad::precision
