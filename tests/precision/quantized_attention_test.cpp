// The attention core under a recipe whose attention products name an accumulator model
// (`accumulate.attention`): through the hooks, q·kᵀ and probs·v multiply the grid values of the
// copies the hooks made and apply their scales as cuBLASLt does. The operands are quantized here
// independently, each tensor by its own amax, and each product is the emulated GEMM run here on
// one head's grid values; the scores are checked through the kernel's softmax.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "format/accumulator.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "model/self_attention.hpp"
#include "ops/cpu/cpu_backend.hpp"
#include "ops/cpu/emulated_gemm.hpp"
#include "ops/cpu/softmax_row.hpp"
#include "precision/quant_hooks.hpp"
#include "support/one_block_model.hpp"
#include "tensor_grid.hpp"

// The file's own namespace: in a unity batch (tests/CMakeLists.txt) another file's local B or T
// would collide.
namespace altgrad::precision::quantized_attention {
namespace {

using precision_test::Grid;
using precision_test::grid_of;

// T > 128: probs·v promotes within its sums under `hopper`.
constexpr std::size_t B = 2, T = 136, C = 32, NH = 2, hs = C / NH, N = B * T;
constexpr int kE4m3Emin = -6;

// q, k, v and probs in E4M3, each tensor scaled by its own amax; the attention products under `model`.
recipe::Recipe attention_recipe(const model::MatmulPoints& points, const format::AccumulatorModel& model) {
  recipe::RecipeSpec spec;
  recipe::SettingsPatch patch;
  patch.format = "e4m3";
  patch.scaling = quant::Scaling::tensor;
  spec.overrides.push_back({"h.0.attn.[qkvp]*", patch, "test", std::nullopt});
  recipe::Recipe r{"test", 1, recipe::resolve(spec, recipe::recipe_points(points))};
  r.accumulate_attention = model;
  return r;
}

// Values of spread ±2 with a few outliers, so that the scale is not a power of two.
std::vector<float> spread_values(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t state = seed;
  for (float& x : v) {
    state = state * 1664525u + 1013904223u;
    const double u = static_cast<double>(state >> 8) / 16777216.0;
    x = static_cast<float>((4.0 * u - 2.0) * ((state & 31u) == 0 ? 5.0 : 1.0));
  }
  return v;
}

// One head's (T, hs) slice of third `part` (0 q, 1 k, 2 v) of qkv (N, 3C), contiguous.
std::vector<float> head_of(const std::vector<float>& qkv, std::size_t part, std::size_t b, std::size_t h) {
  std::vector<float> out(T * hs);
  for (std::size_t t = 0; t < T; ++t) {
    std::copy_n(qkv.data() + (b * T + t) * 3 * C + part * C + h * hs, hs, out.data() + t * hs);
  }
  return out;
}

// Third `part` of qkv as an (N, C) matrix.
std::vector<float> third(const std::vector<float>& qkv, std::size_t part) {
  std::vector<float> out(N * C);
  for (std::size_t n = 0; n < N; ++n) std::copy_n(qkv.data() + n * 3 * C + part * C, C, out.data() + n * C);
  return out;
}

// qkv (N, 3C) from its three thirds, each (N, C).
std::vector<float> joined(const Grid& q, const Grid& k, const Grid& v) {
  std::vector<float> qkv(N * 3 * C);
  for (std::size_t n = 0; n < N; ++n) {
    std::copy_n(q.values.data() + n * C, C, qkv.data() + n * 3 * C);
    std::copy_n(k.values.data() + n * C, C, qkv.data() + n * 3 * C + C);
    std::copy_n(v.values.data() + n * C, C, qkv.data() + n * 3 * C + 2 * C);
  }
  return qkv;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
        << what << "[" << i << "]: " << got[i] << " against " << want[i];
  }
}

TEST(QuantizedAttention, UnderHopperBothForwardProductsMultiplyGridValuesAndApplyTheScales) {
  const format::AccumulatorModel hopper = format::parse_accumulator("hopper");
  const model::MatmulPoints points(test_support::one_block_model(NH, C, T));
  precision::QuantHooks hooks(points, attention_recipe(points, hopper));
  hooks.begin_step(0, false);
  const std::vector<float> qkv = spread_values(N * 3 * C, 5);
  std::vector<float> out(N * C), probs(B * NH * T * T), qkv_copy(N * 3 * C), probs_copy(B * NH * T * T);
  std::vector<float> scratch(N * C), scratch_hooked(N * C);
  model::self_attention_forward<float>(ops::cpu::kernels<float>(), out, probs, qkv,
                                       {&ops::host_memory(), qkv_copy, probs_copy, scratch, scratch_hooked}, points, 0, &hooks,
                                       {B, T, C, NH});

  const Grid q = grid_of(third(qkv, 0)), k = grid_of(third(qkv, 1)), v = grid_of(third(qkv, 2));
  const std::vector<float> grids = joined(q, k, v);
  // scores = fl32(fl32(1/s_q · 1/s_k) · 1/√hs) · the sum, then the kernel's softmax.
  std::vector<float> want_probs(probs.size());
  const float score_alpha = (1.0f / q.scale) * (1.0f / k.scale) * (1.0f / std::sqrt(static_cast<float>(hs)));
  for (std::size_t bh = 0; bh < B * NH; ++bh) {
    const std::vector<float> qh = head_of(grids, 0, bh / NH, bh % NH), kh = head_of(grids, 1, bh / NH, bh % NH);
    float* scores = want_probs.data() + bh * T * T;
    ops::cpu::emulated_gemm_general(hopper, T, T, hs, {qh.data(), hs, 1, kE4m3Emin}, {kh.data(), 1, hs, kE4m3Emin},
                                    score_alpha, false, scores, T);
    for (std::size_t t = 0; t < T; ++t) {
      ops::cpu::softmax_row(scores + t * T, scores + t * T, t + 1, T);
      std::fill(scores + t * T + t + 1, scores + (t + 1) * T, 0.0f);
    }
  }
  expect_same_bits(probs, want_probs, "probs");
  // out = fl32(1/s_p · 1/s_v) · the sum of the quantized probabilities times v.
  const Grid p = grid_of(want_probs);
  std::vector<float> want_out(N * C), head_out(T * hs);
  for (std::size_t bh = 0; bh < B * NH; ++bh) {
    const std::size_t b = bh / NH, h = bh % NH;
    const std::vector<float> vh = head_of(grids, 2, b, h);
    ops::cpu::emulated_gemm_general(hopper, T, hs, T, {p.values.data() + bh * T * T, T, 1, kE4m3Emin},
                                    {vh.data(), hs, 1, kE4m3Emin}, (1.0f / p.scale) * (1.0f / v.scale), false,
                                    head_out.data(), hs);
    for (std::size_t t = 0; t < T; ++t) {
      std::copy_n(head_out.data() + t * hs, hs, want_out.data() + (b * T + t) * C + h * hs);
    }
  }
  expect_same_bits(out, want_out, "out");
}

}  // namespace
}  // namespace altgrad::precision::quantized_attention
