#include "ops/cpu/attention.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/cpu/emulated_gemm.hpp"
#include "ops/cpu/emulated_operands.hpp"
#include "ops/cpu/gemm.hpp"
#include "ops/cpu/parallel.hpp"
#include "ops/cpu/softmax_row.hpp"
#include "ops/cpu/vector_math.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cpu {

// The types the exported kernels' lambdas capture stay out of the anonymous namespace: in a unity
// build this file is an included one, and GCC warns (-Wsubobject-linkage) when a type of an
// included file's anonymous namespace is part of a function with external linkage.
namespace attention_detail {

// One head's dimensions as BLAS ints: T, its size hs, and the row strides of qkv (3C) and out (C).
struct HeadView {
  int T, hs, C3, C;
};

// Where the slices of one (b, h) pair start: its q in qkv-shaped buffers (k and v follow at +C and
// +2C), its channels in out-shaped ones, its (T, T) block in probs-shaped ones.
struct HeadOffsets {
  std::size_t qkv, out, probs;
};

}  // namespace attention_detail

namespace {

using attention_detail::HeadOffsets;
using attention_detail::HeadView;

template <typename Scalar>
Scalar score_scale(std::size_t hs) {
  return Scalar{1} / std::sqrt(static_cast<Scalar>(hs));
}

// Each head's products are GEMMs over strided views of qkv (row stride 3C) and out (row stride C).
// They run inside the parallel loop over heads, each on the calling thread (ops/cpu/gemm.hpp), so
// every head is computed the same way whatever the thread count. Causality is used a block at a
// time: queries in blocks of kQueryBlock see only the keys up to their block's end, so only the
// diagonal blocks compute masked scores (3/8 fewer score flops at T = 256). With finite operands
// the skipped terms are exact zeros (masked probabilities and their gradients) added after or
// before the others, so the blocks gave the same bits as the full products
// (scripts/compare_runs.sh, OpenBLAS's SkylakeX kernel).
constexpr std::size_t kQueryBlock = 64;

// Calls body(first, rows) for each block of query rows (or, in the backward products, of keys).
template <typename Body>
void for_each_block(std::size_t T, Body&& body) {
  for (std::size_t first = 0; first < T; first += kQueryBlock) body(first, std::min(kQueryBlock, T - first));
}

int blas_int(std::size_t n) { return static_cast<int>(n); }

// One head's view, once check_attention_* has found NH dividing C and T, hs, 3C and C positive ints.
HeadView head_view(std::size_t T, std::size_t C, std::size_t NH) {
  return {blas_int(T), blas_int(C / NH), blas_int(3 * C), blas_int(C)};
}

// Calls body(offsets) for every (b, h) pair, the pairs in parallel.
template <typename Body>
void for_each_head(std::size_t B, std::size_t T, std::size_t C, std::size_t NH, Body&& body) {
  const std::size_t hs = C / NH;
#pragma omp parallel for schedule(static)
  for (std::size_t bh = 0; bh < B * NH; ++bh) {
    const std::size_t b = bh / NH;
    const std::size_t h = bh % NH;
    body(HeadOffsets{b * T * 3 * C + h * hs, b * T * C + h * hs, bh * T * T});
  }
}

// One (b, h) pair's (T, T) scores, overwritten by their probabilities: the softmax over keys 0..t
// of each row t, in place; the masked keys get probability 0 (those past a query block's end were
// not computed).
template <typename Scalar>
void head_softmax(Scalar* probs, std::size_t T) {
  for (std::size_t t = 0; t < T; ++t) {
    Scalar* p = probs + t * T;
    softmax_row(p, p, t + 1, T);  // the whole row's T entries are room for the float one's last vector
    std::fill(p + t + 1, p + T, Scalar{0});
  }
}

// One (b, h) pair: q, k of position t at qkv + t·3C + {0, C}; probabilities (T, T) at probs.
template <typename Scalar>
void head_probs(Scalar* probs, const Scalar* qkv, const HeadView& v, std::size_t C) {
  const std::size_t T = static_cast<std::size_t>(v.T);
  const Scalar* q = qkv;
  const Scalar* k = qkv + C;
  // The scores scaled by BLAS's alpha: the kernel rounds each product sum times alpha once, as a
  // multiplication after the GEMM would, without another pass over the scores.
  const Scalar scale = score_scale<Scalar>(static_cast<std::size_t>(v.hs));
  for_each_block(T, [&](std::size_t first, std::size_t rows) {  // scores of keys 0..first + rows
    gemm(CblasNoTrans, CblasTrans, blas_int(rows), blas_int(first + rows), v.hs, scale, q + first * v.C3, v.C3, k,
         v.C3, Scalar{0}, probs + first * T, v.T);
  });
  head_softmax(probs, T);
}

// head_probs under an accumulator model: each score is one emulated sum over the head's hs
// channels, times alpha. Outputs of the emulated GEMM do not depend on each other, so the query
// blocks compute the bits of one (T, T) GEMM while skipping most masked scores, as head_probs does.
void head_probs_emulated(float* probs, const float* qkv, const HeadView& v, std::size_t C, const EmulatedGemm& g,
                         float alpha) {
  const std::size_t T = static_cast<std::size_t>(v.T), hs = static_cast<std::size_t>(v.hs);
  const std::size_t C3 = static_cast<std::size_t>(v.C3);
  const float* q = qkv;
  const float* k = qkv + C;
  for_each_block(T, [&](std::size_t first, std::size_t rows) {  // A = q (rows, hs), B = kᵀ (hs, keys)
    emulated_gemm(*g.model, rows, first + rows, hs, emulated_operand(q + first * C3, C3, 1, g.a),
                  emulated_operand(k, 1, C3, g.b), alpha, false, probs + first * T, T);
  });
  head_softmax(probs, T);
}

// One (b, h) pair: v of position t at qkv + t·3C + 2C; output rows at out + t·C.
template <typename Scalar>
void head_values(Scalar* out, const Scalar* probs, const Scalar* qkv, const HeadView& v, std::size_t C) {
  const std::size_t T = static_cast<std::size_t>(v.T);
  const Scalar* val = qkv + 2 * C;
  for_each_block(T, [&](std::size_t first, std::size_t rows) {  // probs · v
    gemm(CblasNoTrans, CblasNoTrans, blas_int(rows), v.hs, blas_int(first + rows), Scalar{1}, probs + first * T, v.T,
         val, v.C3, Scalar{0}, out + first * static_cast<std::size_t>(v.C), v.C);
  });
}

// head_values under an accumulator model: out (T, hs) = probs (T, T) · v (T, hs) as one GEMM over
// every key position, as cuBLAS would run it on the stored probabilities.
void head_values_emulated(float* out, const float* probs, const float* qkv, const HeadView& v, std::size_t C,
                          const EmulatedGemm& g) {
  const std::size_t T = static_cast<std::size_t>(v.T), hs = static_cast<std::size_t>(v.hs);
  const std::size_t C3 = static_cast<std::size_t>(v.C3);
  emulated_gemm(*g.model, T, hs, T, emulated_operand(probs, T, 1, g.a), emulated_operand(qkv + 2 * C, C3, 1, g.b),
                dequantization(g), false, out, C);
}

template <typename Scalar>
Scalar dot(const Scalar* x, const Scalar* y, std::size_t n) {
  return row_sum<Scalar>(n, [x, y](auto at) { return at(x) * at(y); });
}

// One (b, h) pair, laid out as in head_probs and head_values; dqkv like qkv, dout like out. q, k, v
// and probs_used are what the forward products multiplied, probs what the softmax produced. dprobs
// (T, T) is scratch for d loss / d probabilities, then d loss / d scores.
template <typename Scalar>
void head_backward(Scalar* dqkv, Scalar* dprobs, const Scalar* dout, const Scalar* qkv, const Scalar* probs,
                   const Scalar* probs_used, const HeadView& v, std::size_t C) {
  const std::size_t T = static_cast<std::size_t>(v.T);
  const Scalar *q = qkv, *k = qkv + C, *val = qkv + 2 * C;
  Scalar *dq = dqkv, *dk = dqkv + C, *dv = dqkv + 2 * C;
  const std::size_t C3 = static_cast<std::size_t>(v.C3), Cs = static_cast<std::size_t>(v.C);
  for_each_block(T, [&](std::size_t first, std::size_t rows) {  // dy · vᵀ, keys 0..first + rows
    gemm(CblasNoTrans, CblasTrans, blas_int(rows), blas_int(first + rows), v.hs, Scalar{1}, dout + first * Cs, v.C,
         val, v.C3, Scalar{0}, dprobs + first * T, v.T);
  });
  const Scalar scale = score_scale<Scalar>(static_cast<std::size_t>(v.hs));
  for (std::size_t t = 0; t < T; ++t) {
    // Softmax backward: dscore_s = p_s · (dp_s − Σ_j p_j dp_j), then the 1/√hs of the scores.
    const Scalar* p = probs + t * T;
    Scalar* d = dprobs + t * T;
    const Scalar p_dp = dot(p, d, t + 1);
    for (std::size_t s = 0; s <= t; ++s) d[s] = p[s] * (d[s] - p_dp) * scale;
    std::fill(d + t + 1, d + T, Scalar{0});
  }
  // Each block of rows of dq, dk and dv is one product's output, written whole (beta = 0).
  for_each_block(T, [&](std::size_t first, std::size_t rows) {  // dscores · k: queries over keys 0..first + rows
    gemm(CblasNoTrans, CblasNoTrans, blas_int(rows), v.hs, blas_int(first + rows), Scalar{1}, dprobs + first * T, v.T,
         k, v.C3, Scalar{0}, dq + first * C3, v.C3);
  });
  // dscoresᵀ · q and probsᵀ · dy: keys in blocks, over the queries first..T−1 that see them.
  for_each_block(T, [&](std::size_t first, std::size_t keys) {
    const std::size_t corner = first * T + first;
    const int queries = blas_int(T - first);
    gemm(CblasTrans, CblasNoTrans, blas_int(keys), v.hs, queries, Scalar{1}, dprobs + corner, v.T, q + first * C3,
         v.C3, Scalar{0}, dk + first * C3, v.C3);
    gemm(CblasTrans, CblasNoTrans, blas_int(keys), v.hs, queries, Scalar{1}, probs_used + corner, v.T,
         dout + first * Cs, v.C, Scalar{0}, dv + first * C3, v.C3);
  });
}

}  // namespace

template <typename Scalar>
void attention_forward(std::span<Scalar> out, std::span<Scalar> probs, std::span<const Scalar> qkv, std::size_t B,
                       std::size_t T, std::size_t C, std::size_t NH) {
  check_attention_forward(out.size(), probs.size(), qkv.size(), B, T, C, NH);

  // Both products of a head in one visit, while its probabilities are still in cache.
  const HeadView view = head_view(T, C, NH);
  for_each_head(B, T, C, NH, [&](const HeadOffsets& at) {
    head_probs(probs.data() + at.probs, qkv.data() + at.qkv, view, C);
    head_values(out.data() + at.out, probs.data() + at.probs, qkv.data() + at.qkv, view, C);
  });
}

template <typename Scalar>
void attention_probs_forward(std::span<Scalar> probs, std::span<const Scalar> qkv, std::size_t B, std::size_t T,
                             std::size_t C, std::size_t NH) {
  check_attention_probs_forward(probs.size(), qkv.size(), B, T, C, NH);

  const HeadView view = head_view(T, C, NH);
  for_each_head(B, T, C, NH,
                [&](const HeadOffsets& at) { head_probs(probs.data() + at.probs, qkv.data() + at.qkv, view, C); });
}

template <typename Scalar>
void attention_values_forward(std::span<Scalar> out, std::span<const Scalar> probs, std::span<const Scalar> qkv,
                              std::size_t B, std::size_t T, std::size_t C, std::size_t NH) {
  check_attention_values_forward(out.size(), probs.size(), qkv.size(), B, T, C, NH);

  const HeadView view = head_view(T, C, NH);
  for_each_head(B, T, C, NH, [&](const HeadOffsets& at) {
    head_values(out.data() + at.out, probs.data() + at.probs, qkv.data() + at.qkv, view, C);
  });
}

// The emulated GEMM runs OpenMP regions of its own. Here they are nested in the loop over heads, so
// they run on the head's thread (a team of one, nesting being off by default), and its thread_local
// scratch is that thread's: heads computed at the same time never share it. Its outputs do not
// depend on each other, so each head's bits are the same on any thread count.
template <typename Scalar>
void attention_probs_forward_emulated(std::span<Scalar> probs, std::span<const Scalar> qkv, std::size_t B,
                                      std::size_t T, std::size_t C, std::size_t NH, const EmulatedGemm& scores) {
  if (scores.model == nullptr) return attention_probs_forward(probs, qkv, B, T, C, NH);
  require_float<Scalar>();
  if constexpr (std::is_same_v<Scalar, float>) {
    check_attention_probs_forward(probs.size(), qkv.size(), B, T, C, NH);
    const HeadView view = head_view(T, C, NH);
    const float alpha = dequantization(scores) * score_scale<float>(C / NH);
    for_each_head(B, T, C, NH, [&](const HeadOffsets& at) {
      head_probs_emulated(probs.data() + at.probs, qkv.data() + at.qkv, view, C, scores, alpha);
    });
  }
}

template <typename Scalar>
void attention_values_forward_emulated(std::span<Scalar> out, std::span<const Scalar> probs,
                                       std::span<const Scalar> qkv, std::size_t B, std::size_t T, std::size_t C,
                                       std::size_t NH, const EmulatedGemm& values) {
  if (values.model == nullptr) return attention_values_forward(out, probs, qkv, B, T, C, NH);
  require_float<Scalar>();
  if constexpr (std::is_same_v<Scalar, float>) {
    check_attention_values_forward(out.size(), probs.size(), qkv.size(), B, T, C, NH);
    const HeadView view = head_view(T, C, NH);
    for_each_head(B, T, C, NH, [&](const HeadOffsets& at) {
      head_values_emulated(out.data() + at.out, probs.data() + at.probs, qkv.data() + at.qkv, view, C, values);
    });
  }
}

template <typename Scalar>
void attention_backward(std::span<Scalar> dqkv, std::span<Scalar> dprobs, std::span<const Scalar> dout,
                        std::span<const Scalar> qkv, std::span<const Scalar> probs, std::size_t B, std::size_t T,
                        std::size_t C, std::size_t NH) {
  attention_backward(dqkv, dprobs, dout, AttentionOperands<Scalar>{qkv, probs}, probs, B, T, C, NH);
}

template <typename Scalar>
void attention_backward(std::span<Scalar> dqkv, std::span<Scalar> dprobs, std::span<const Scalar> dout,
                        const AttentionOperands<Scalar>& used, std::span<const Scalar> probs, std::size_t B,
                        std::size_t T, std::size_t C, std::size_t NH) {
  check_attention_backward(dqkv.size(), dprobs.size(), dout.size(), used.qkv.size(), used.probs.size(), probs.size(), B,
                           T, C, NH);

  const HeadView view = head_view(T, C, NH);
  for_each_head(B, T, C, NH, [&](const HeadOffsets& at) {
    head_backward(dqkv.data() + at.qkv, dprobs.data() + at.probs, dout.data() + at.out, used.qkv.data() + at.qkv,
                  probs.data() + at.probs, used.probs.data() + at.probs, view, C);
  });
}

template void attention_forward<float>(std::span<float>, std::span<float>, std::span<const float>, std::size_t,
                                       std::size_t, std::size_t, std::size_t);
template void attention_forward<double>(std::span<double>, std::span<double>, std::span<const double>, std::size_t,
                                        std::size_t, std::size_t, std::size_t);
template void attention_probs_forward<float>(std::span<float>, std::span<const float>, std::size_t, std::size_t,
                                             std::size_t, std::size_t);
template void attention_probs_forward<double>(std::span<double>, std::span<const double>, std::size_t, std::size_t,
                                              std::size_t, std::size_t);
template void attention_values_forward<float>(std::span<float>, std::span<const float>, std::span<const float>,
                                              std::size_t, std::size_t, std::size_t, std::size_t);
template void attention_values_forward<double>(std::span<double>, std::span<const double>, std::span<const double>,
                                               std::size_t, std::size_t, std::size_t, std::size_t);
template void attention_probs_forward_emulated<float>(std::span<float>, std::span<const float>, std::size_t,
                                                      std::size_t, std::size_t, std::size_t, const EmulatedGemm&);
template void attention_probs_forward_emulated<double>(std::span<double>, std::span<const double>, std::size_t,
                                                       std::size_t, std::size_t, std::size_t, const EmulatedGemm&);
template void attention_values_forward_emulated<float>(std::span<float>, std::span<const float>,
                                                       std::span<const float>, std::size_t, std::size_t, std::size_t,
                                                       std::size_t, const EmulatedGemm&);
template void attention_values_forward_emulated<double>(std::span<double>, std::span<const double>,
                                                        std::span<const double>, std::size_t, std::size_t,
                                                        std::size_t, std::size_t, const EmulatedGemm&);
template void attention_backward<float>(std::span<float>, std::span<float>, std::span<const float>,
                                        std::span<const float>, std::span<const float>, std::size_t, std::size_t,
                                        std::size_t, std::size_t);
template void attention_backward<double>(std::span<double>, std::span<double>, std::span<const double>,
                                         std::span<const double>, std::span<const double>, std::size_t, std::size_t,
                                         std::size_t, std::size_t);
template void attention_backward<float>(std::span<float>, std::span<float>, std::span<const float>,
                                        const AttentionOperands<float>&, std::span<const float>, std::size_t,
                                        std::size_t, std::size_t, std::size_t);
template void attention_backward<double>(std::span<double>, std::span<double>, std::span<const double>,
                                         const AttentionOperands<double>&, std::span<const double>, std::size_t,
                                         std::size_t, std::size_t, std::size_t);

}  // namespace altgrad::ops::cpu
