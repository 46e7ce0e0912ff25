#pragma once
// Causal multi-head self-attention on the GPU; the meaning, shapes and checks of
// ops/cpu/attention.hpp, and its bits (ops/cuda/attention_math.hpp):
//   qkv (B, T, 3C), probs (B, NH, T, T) with masked entries exactly 0, out (B, T, C), hs = C / NH
//
// The straightforward form: the probabilities in full, and one thread per element of each product,
// summed in the CPU GEMM's order. Correct and deterministic first; a fused kernel is a later speedup.
#include <cstddef>
#include <span>

#include "ops/operands.hpp"

namespace altgrad::ops::cuda {

// Overwrites out and probs. Throws std::invalid_argument on a size mismatch or when NH does not divide C.
void attention_forward(std::span<float> out, std::span<float> probs, std::span<const float> qkv, std::size_t B,
                       std::size_t T, std::size_t C, std::size_t NH);

// The first half: overwrites probs with softmax(q · kᵀ / √hs, causal mask).
void attention_probs_forward(std::span<float> probs, std::span<const float> qkv, std::size_t B, std::size_t T,
                             std::size_t C, std::size_t NH);

// The second half: overwrites out with probs · v.
void attention_values_forward(std::span<float> out, std::span<const float> probs, std::span<const float> qkv,
                              std::size_t B, std::size_t T, std::size_t C, std::size_t NH);

// Overwrites dqkv (B, T, 3C) from dout (B, T, C): the products read `used`, the softmax is
// differentiated at `probs`; dprobs (B, NH, T, T) is scratch, overwritten.
void attention_backward(std::span<float> dqkv, std::span<float> dprobs, std::span<const float> dout,
                        const AttentionOperands<float>& used, std::span<const float> probs, std::size_t B,
                        std::size_t T, std::size_t C, std::size_t NH);

}  // namespace altgrad::ops::cuda
