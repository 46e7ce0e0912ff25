// The attention core under MX block scaling against the spec (tests/precision/mx_reference.hpp), in
// double. Each product reads its operands blocked along its own reduction dimension:
//   scores = q·kᵀ     q, k along each head's hs channels
//   out = probs·v     probs along the keys, v down the key positions of a sequence
//   dprobs = dy·vᵀ    v along each head's channels
//   dq = dscores·k    k down the positions of a sequence
//   dk = dscoresᵀ·q   q down the positions of a sequence
//   dv = probsᵀ·dy    probs down the query positions
// with dy and the softmax unquantized. Reusing the forward's copies in the backward pass gives
// measurably different gradients; under per-tensor scaling the backward pass reads the very
// copies the forward pass made.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "format/philox.hpp"
#include "model/self_attention.hpp"
#include "mx_reference.hpp"
#include "ops/cpu/attention.hpp"
#include "ops/cpu/cpu_backend.hpp"
#include "precision/quant_hooks.hpp"
#include "support/one_block_model.hpp"

// The file's own namespace: in a unity batch (tests/CMakeLists.txt) another file's local B, T or N
// would shadow its shape constants.
namespace altgrad::precision::mx_attention_backward {
namespace {

using precision_test::MxAxis;
using precision_test::mx_reference;
using precision_test::relative_gap;

// hs = 48 (blocks of 32 + 16 along a head) and T = 40 (32 + 8 along a sequence).
constexpr std::size_t B = 2, T = 40, C = 96, NH = 2, hs = C / NH, N = B * T;

recipe::Recipe attention_recipe(const model::MatmulPoints& points, quant::Scaling scaling) {
  recipe::RecipeSpec spec;
  recipe::SettingsPatch patch;
  patch.enabled = true;
  patch.format = "e4m3";
  patch.scaling = scaling;
  spec.overrides.push_back({"h.0.attn.[qkvp]*", patch, "test", std::nullopt});
  return recipe::Recipe{"test", 1, recipe::resolve(spec, recipe::recipe_points(points))};
}

// One third (0 q, 1 k, 2 v) of qkv as an (N, C) matrix.
std::vector<float> third(const std::vector<float>& qkv, std::size_t part) {
  std::vector<float> t(N * C);
  for (std::size_t n = 0; n < N; ++n) std::copy_n(qkv.begin() + n * 3 * C + part * C, C, t.begin() + n * C);
  return t;
}

// The attention core's run with hooks: forward, the backward operands, the backward.
struct AttentionRun {
  std::vector<float> qkv = precision_test::graded_values(N, 3 * C, 77, 0, 2.0, 9),
                     dy = precision_test::graded_values(N, C, 77, 1, 0.01, 9);
  std::vector<float> out = std::vector<float>(N * C), probs = std::vector<float>(B * NH * T * T);
  std::vector<float> dqkv = std::vector<float>(N * 3 * C, 0.0f), dprobs = std::vector<float>(B * NH * T * T);
  std::vector<float> fwd_qkv = std::vector<float>(N * 3 * C), fwd_probs = std::vector<float>(B * NH * T * T);
  std::vector<float> bwd_qkv = std::vector<float>(N * 3 * C), bwd_probs = std::vector<float>(B * NH * T * T);
  std::vector<float> scratch = std::vector<float>(N * C), scratch_hooked = std::vector<float>(N * C);
  ops::AttentionOperands<float> forward_used, backward_used;

  AttentionRun(const model::MatmulPoints& points, precision::QuantHooks& hooks) {
    const model::AttentionShape shape{B, T, C, NH};
    forward_used =
        model::self_attention_forward<float>(ops::cpu::kernels<float>(), out, probs, qkv,
                                             {&ops::host_memory(), fwd_qkv, fwd_probs, scratch, scratch_hooked}, points, 0, &hooks, shape);
    backward_used = model::self_attention_backward_operands<float>(
        forward_used, qkv, probs, {&ops::host_memory(), bwd_qkv, bwd_probs, scratch, scratch_hooked}, points, 0, &hooks, shape);
    ops::cpu::attention_backward<float>(dqkv, dprobs, dy, backward_used, probs, B, T, C, NH);
  }
};

// The gradients of one (b, h) pair's products in double from dequantized operands: q, k, v as
// (N, C), probs and the unquantized softmax P as (B·NH·T, T).
struct Operands {
  std::vector<double> v, k, q, probs;  // as dprobs, dq, dk, dv read them
};

std::vector<double> reference_dqkv(const AttentionRun& run, const Operands& o) {
  std::vector<double> dqkv(N * 3 * C, 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(hs));
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < NH; ++h) {
      const std::size_t bh = (b * NH + h) * T * T;
      const auto at = [&](std::size_t t, std::size_t d) { return (b * T + t) * C + h * hs + d; };
      std::vector<double> ds(T * T, 0.0);
      for (std::size_t t = 0; t < T; ++t) {
        std::vector<double> dp(t + 1, 0.0);
        double p_dp = 0;
        for (std::size_t s = 0; s <= t; ++s) {
          for (std::size_t d = 0; d < hs; ++d) dp[s] += run.dy[at(t, d)] * o.v[at(s, d)];
          p_dp += run.probs[bh + t * T + s] * dp[s];
        }
        for (std::size_t s = 0; s <= t; ++s) ds[t * T + s] = run.probs[bh + t * T + s] * (dp[s] - p_dp) * scale;
      }
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t s = 0; s < T; ++s) {
          for (std::size_t d = 0; d < hs; ++d) {
            const std::size_t row_t = (b * T + t) * 3 * C + h * hs + d, row_s = (b * T + s) * 3 * C + h * hs + d;
            dqkv[row_t] += ds[t * T + s] * o.k[at(s, d)];                        // dq
            dqkv[row_s + C] += ds[t * T + s] * o.q[at(t, d)];                    // dk
            dqkv[row_s + 2 * C] += o.probs[bh + t * T + s] * run.dy[at(t, d)];   // dv
          }
        }
      }
    }
  }
  return dqkv;
}

TEST(MxAttentionBackward, EveryProductBlocksItsOperandsAlongItsOwnReductionDimension) {
  const model::MatmulPoints points(test_support::one_block_model(NH, C, T));
  precision::QuantHooks hooks(points, attention_recipe(points, quant::Scaling::block));
  hooks.begin_step(0, false);
  const AttentionRun run(points, hooks);

  const std::vector<float> q = third(run.qkv, 0), k = third(run.qkv, 1), v = third(run.qkv, 2);
  const MxAxis per_head{false, hs}, per_sequence{true, T}, along_keys{false, T};
  // Forward: the operands the products read are exactly the spec's.
  const std::vector<double> q_fwd = mx_reference(q, N, C, per_head, "e4m3"), k_fwd = mx_reference(k, N, C, per_head, "e4m3"),
                            v_fwd = mx_reference(v, N, C, per_sequence, "e4m3");
  const std::vector<double> p_fwd = mx_reference(run.probs, B * NH * T, T, along_keys, "e4m3");
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t c = 0; c < C; ++c) {
      ASSERT_EQ(run.forward_used.qkv[n * 3 * C + c], q_fwd[n * C + c]) << n << "," << c;
      ASSERT_EQ(run.forward_used.qkv[n * 3 * C + C + c], k_fwd[n * C + c]) << n << "," << c;
      ASSERT_EQ(run.forward_used.qkv[n * 3 * C + 2 * C + c], v_fwd[n * C + c]) << n << "," << c;
    }
  }
  for (std::size_t i = 0; i < p_fwd.size(); ++i) ASSERT_EQ(run.forward_used.probs[i], p_fwd[i]) << i;

  // Backward: gradients from the spec's copies along the backward products' axes.
  const Operands spec{mx_reference(v, N, C, per_head, "e4m3"), mx_reference(k, N, C, per_sequence, "e4m3"),
                      mx_reference(q, N, C, per_sequence, "e4m3"),
                      mx_reference(run.probs, B * NH * T, T, MxAxis{true, T}, "e4m3")};
  constexpr double kTolerance = 1e-5;
  EXPECT_LT(relative_gap(run.dqkv, reference_dqkv(run, spec)), kTolerance);
  // The forward's copies, as the backward pass used to reuse them: measurably different.
  const Operands reused{v_fwd, k_fwd, q_fwd, p_fwd};
  EXPECT_GT(relative_gap(run.dqkv, reference_dqkv(run, reused)), 100 * kTolerance);

  // Each operand has one row-wise and one column-wise copy this step.
  for (const model::Operand operand : {model::Operand::q, model::Operand::k, model::Operand::v, model::Operand::probs}) {
    const quant::PointQuantizer* point = hooks.point(points.attention(0, operand).index);
    EXPECT_EQ(point->step_stats().calls, 1u);
    EXPECT_EQ(point->column_stats().calls, 1u);
  }
}

TEST(MxAttentionBackward, PerTensorScalingReadsTheForwardCopiesInTheBackwardPass) {
  const model::MatmulPoints points(test_support::one_block_model(NH, C, T));
  for (const quant::Scaling scaling : {quant::Scaling::none, quant::Scaling::tensor, quant::Scaling::delayed}) {
    precision::QuantHooks hooks(points, attention_recipe(points, scaling));
    hooks.begin_step(0, false);
    const AttentionRun run(points, hooks);
    EXPECT_EQ(run.backward_used.qkv.data(), run.forward_used.qkv.data());
    EXPECT_EQ(run.backward_used.probs.data(), run.forward_used.probs.data());
    for (const model::Operand operand : {model::Operand::q, model::Operand::k, model::Operand::v, model::Operand::probs}) {
      const quant::PointQuantizer* point = hooks.point(points.attention(0, operand).index);
      EXPECT_EQ(point->step_stats().calls, 1u);
      EXPECT_EQ(point->column_stats().calls, 0u);
    }
  }
}

}  // namespace
}  // namespace altgrad::precision::mx_attention_backward
