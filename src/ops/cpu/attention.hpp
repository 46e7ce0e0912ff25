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
#include <cstddef>
#include <span>

namespace altgrad::ops::cpu {

// Overwrites out and probs. Throws std::invalid_argument on a size mismatch or when NH does not
// divide C.
template <typename Scalar>
void attention_forward(std::span<Scalar> out, std::span<Scalar> probs, std::span<const Scalar> qkv, std::size_t B,
                       std::size_t T, std::size_t C, std::size_t NH);

// Adds to dqkv (B, T, 3C) from dout (B, T, C), using qkv and probs from the forward pass; dprobs
// (B, NH, T, T) is scratch, overwritten.
template <typename Scalar>
void attention_backward(std::span<Scalar> dqkv, std::span<Scalar> dprobs, std::span<const Scalar> dout,
                        std::span<const Scalar> qkv, std::span<const Scalar> probs, std::size_t B, std::size_t T,
                        std::size_t C, std::size_t NH);

}  // namespace altgrad::ops::cpu
