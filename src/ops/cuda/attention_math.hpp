#pragma once
// The elements of causal self-attention, one output each, with the bits of the CPU's float kernel
// (ops/cpu/attention.cpp): its products summed in the CPU GEMM's order (ops/cuda/gemm_order.hpp)
// over the CPU's ranges, and its softmax rows (ops/cuda/softmax_math.hpp).
//
// One (b, h) pair's view, as the CPU lays it out: q, k, v of position t at q + t·3C, k + t·3C,
// v + t·3C (k = q + C, v = q + 2C), hs elements each; out and dout rows at t·C; probs (T, T).
// Masked entries (key s > query t) of probs and of its gradients are exactly 0.
#include <cmath>
#include <cstddef>

#include "ops/cuda/gemm_order.hpp"
#include "ops/cuda/host_device.hpp"
#include "ops/cuda/lane_sum.hpp"

namespace altgrad::ops::cuda {

// The CPU computes the products a block of kCpuKeyBlock queries (or, reducing over queries, keys)
// at a time (ops/cpu/attention.cpp, kQueryBlock): a product over keys for query t runs over keys
// [0, end of t's block), one over queries for key s over queries [start of s's block, T). The
// masked terms it reads are products with zeros; they are read here too, so that the sums are the
// CPU's whatever the probabilities passed in.
inline constexpr std::size_t kCpuKeyBlock = 64;

ALTGRAD_OPS_HD inline std::size_t attention_block_end(std::size_t t, std::size_t T) {
  const std::size_t end = t - t % kCpuKeyBlock + kCpuKeyBlock;
  return end < T ? end : T;
}

ALTGRAD_OPS_HD inline float attention_scale(std::size_t hs) { return 1.0f / sqrtf(static_cast<float>(hs)); }

// q_t · k_s / √hs, the scale as the GEMM's alpha (one rounding of the sum times it).
ALTGRAD_OPS_HD inline float attention_score(const float* q_t, const float* k_s, std::size_t hs, float scale) {
  return gemm_order_dot(
      0, hs, scale, [q_t](std::size_t i) { return q_t[i]; }, [k_s](std::size_t i) { return k_s[i]; });
}

// out[t, i] = Σ_s probs[t, s] · v[s, i]; v_i is column i of v, rows `row_stride` apart.
ALTGRAD_OPS_HD inline float attention_value(const float* probs_t, const float* v_i, std::size_t row_stride,
                                            std::size_t t, std::size_t T) {
  return gemm_order_dot(
      0, attention_block_end(t, T), 1.0f, [probs_t](std::size_t s) { return probs_t[s]; },
      [v_i, row_stride](std::size_t s) { return v_i[s * row_stride]; });
}

// d loss / d probs[t, s] = dout_t · v_s, before the softmax's backward pass.
ALTGRAD_OPS_HD inline float attention_dprob(const float* dout_t, const float* v_s, std::size_t hs) {
  return gemm_order_dot(
      0, hs, 1.0f, [dout_t](std::size_t i) { return dout_t[i]; }, [v_s](std::size_t i) { return v_s[i]; });
}

// Row t of the softmax's backward pass, in place: d (T) holds d loss / d probs on entry and
// d loss / d scores on return, the 1/√hs of the scores included; p (T) is the softmax's output.
//   dscore_s = p_s · (dp_s − Σ_j p_j dp_j) · scale for s <= t, 0 beyond
template <typename Group>
ALTGRAD_OPS_HD void attention_softmax_backward_row(const Group& group, float* d, const float* p, std::size_t t,
                                                   std::size_t T, float scale) {
  const float p_dp = group.sum(t + 1, [p, d](std::size_t s) { return p[s] * d[s]; });
  for (std::size_t s = group.first(); s < T; s += group.stride()) d[s] = s <= t ? p[s] * (d[s] - p_dp) * scale : 0.0f;
}

// dq[t, i] = Σ_s dscores[t, s] · k[s, i].
ALTGRAD_OPS_HD inline float attention_dquery(const float* dscores_t, const float* k_i, std::size_t row_stride,
                                             std::size_t t, std::size_t T) {
  return gemm_order_dot(
      0, attention_block_end(t, T), 1.0f, [dscores_t](std::size_t s) { return dscores_t[s]; },
      [k_i, row_stride](std::size_t s) { return k_i[s * row_stride]; });
}

// Σ_t m[t, s] · x[t, i] for key s: dk (m = dscores, x = q) and dv (m = the probabilities the
// product used, x = dout). m_s is column s of the (T, T) matrix (rows T apart); x_i is column i of
// x, rows `row_stride` apart.
ALTGRAD_OPS_HD inline float attention_key_gradient(const float* m_s, std::size_t T, const float* x_i,
                                                   std::size_t row_stride, std::size_t s) {
  return gemm_order_dot(
      s - s % kCpuKeyBlock, T, 1.0f, [m_s, T](std::size_t t) { return m_s[t * T]; },
      [x_i, row_stride](std::size_t t) { return x_i[t * row_stride]; });
}

}  // namespace altgrad::ops::cuda
