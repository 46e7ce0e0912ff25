#pragma once
// Causal multi-head self-attention core, nanoGPT's CausalSelfAttention between c_attn and c_proj:
//   q, k, v = qkv.split(C); each viewed as (B, NH, T, hs), hs = C / NH
//   probs = softmax(q · kᵀ / √hs, causal mask)
//   out = (probs · v) with the heads re-interleaved, y.transpose(1, 2).view(B, T, C)
//
//   qkv   (B, T, 3C)       row = [q (C) | k (C) | v (C)], head h at channels [h·hs, (h+1)·hs) of each
//   probs (B, NH, T, T)    written by the forward pass, read by the backward pass; the masked
//                          entries (key position > query position) are exactly 0
//   out   (B, T, C)        head h at channels [h·hs, (h+1)·hs)
//
// The (b, h) pairs run in parallel; each writes only its own slices, in a fixed order, and its
// products are GEMMs on strided views.
//
// The forward pass also comes in two halves (probs, then out), so that a caller can rewrite the
// probabilities (for example quantize them) before they multiply v; the backward pass then takes
// the operands the products multiplied apart from the probabilities the softmax produced.
#include <cstddef>
#include <span>

#include "ops/operands.hpp"

namespace altgrad::ops::cpu {

// Overwrites out and probs. Throws std::invalid_argument on a size mismatch or when NH does not
// divide C.
template <typename Scalar>
void attention_forward(std::span<Scalar> out, std::span<Scalar> probs, std::span<const Scalar> qkv, std::size_t B,
                       std::size_t T, std::size_t C, std::size_t NH);

// The first half of attention_forward: overwrites probs with softmax(q · kᵀ / √hs, causal mask).
template <typename Scalar>
void attention_probs_forward(std::span<Scalar> probs, std::span<const Scalar> qkv, std::size_t B, std::size_t T,
                             std::size_t C, std::size_t NH);

// The second half: overwrites out with probs · v. Both halves on the same inputs give the same bits
// as attention_forward.
template <typename Scalar>
void attention_values_forward(std::span<Scalar> out, std::span<const Scalar> probs, std::span<const Scalar> qkv,
                              std::size_t B, std::size_t T, std::size_t C, std::size_t NH);

// The two halves with their product under an accumulator model (format/accumulator.hpp) where the
// EmulatedGemm names one (model null: the halves above, bit for bit), through the emulated GEMM
// (ops/cpu/emulated_gemm.hpp), one GEMM per head as cuBLAS would compute it from stored operands:
//   scores = fl32(alpha · Σ_i q_i·k_i) over K = hs, alpha = fl32(fl32(1/s_q · 1/s_k) · fl32(1/√hs)):
//            the scale of the scores joins the operands' dequantization scales in cuBLASLt's alpha;
//   out    = fl32(fl32(1/s_p · 1/s_v) · Σ_s p_s·v_s) over K = T, every key position of the stored
//            probabilities: the masked ones are exact zeros, which take no part in a step's largest
//            exponent and add nothing.
// The scores' softmax is the one above. Float only: Scalar = double throws std::invalid_argument.
template <typename Scalar>
void attention_probs_forward_emulated(std::span<Scalar> probs, std::span<const Scalar> qkv, std::size_t B,
                                      std::size_t T, std::size_t C, std::size_t NH, const EmulatedGemm& scores);
template <typename Scalar>
void attention_values_forward_emulated(std::span<Scalar> out, std::span<const Scalar> probs,
                                       std::span<const Scalar> qkv, std::size_t B, std::size_t T, std::size_t C,
                                       std::size_t NH, const EmulatedGemm& values);

// Overwrites dqkv (B, T, 3C) from dout (B, T, C), using qkv and probs from the forward pass; dprobs
// (B, NH, T, T) is scratch, overwritten.
template <typename Scalar>
void attention_backward(std::span<Scalar> dqkv, std::span<Scalar> dprobs, std::span<const Scalar> dout,
                        std::span<const Scalar> qkv, std::span<const Scalar> probs, std::size_t B, std::size_t T,
                        std::size_t C, std::size_t NH);

// attention_backward with a straight-through estimator: the backward products read `used`
// (ops/operands.hpp: the forward products' operands, or copies of them quantized along the
// backward products' reduction axes), the softmax is differentiated at the probabilities it produced (`probs`):
//   dv = used.probsᵀ · dout        dp = dout · vᵀ                   (v of used.qkv)
//   ds = probs ⊙ (dp − rowsum(dp ⊙ probs)) / √hs
//   dq = ds · k                    dk = dsᵀ · q                     (q, k of used.qkv)
// With used = {qkv, probs} it is attention_backward, bit for bit.
template <typename Scalar>
void attention_backward(std::span<Scalar> dqkv, std::span<Scalar> dprobs, std::span<const Scalar> dout,
                        const AttentionOperands<Scalar>& used, std::span<const Scalar> probs, std::size_t B,
                        std::size_t T, std::size_t C, std::size_t NH);

}  // namespace altgrad::ops::cpu
