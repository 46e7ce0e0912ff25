#pragma once
// Softmax and cross-entropy loss fused, per row, on the GPU; the meaning, shapes and checks of
// ops/cpu/softmax_cross_entropy.hpp (ops/cuda/softmax_math.hpp):
//   logits, probs (N, V); targets (N) in [0, V); losses (N) = logsumexp(logits) − logits[target]
#include <cstddef>
#include <cstdint>
#include <span>

#include "ops/cuda/index_check.hpp"

namespace altgrad::ops::cuda {

// Overwrites losses and probs. Throws std::invalid_argument on a size mismatch or a target outside [0, V).
void softmax_cross_entropy_forward(std::span<float> losses, std::span<float> probs, std::span<const float> logits,
                                   std::span<const std::int32_t> targets, std::size_t N, std::size_t V,
                                   IndexCheck& check);

// Adds (probs − onehot(target)) · dlosses[row] to dlogits, row by row (dlosses (N)).
void softmax_cross_entropy_backward(std::span<float> dlogits, std::span<const float> dlosses,
                                    std::span<const float> probs, std::span<const std::int32_t> targets, std::size_t N,
                                    std::size_t V, IndexCheck& check);

}  // namespace altgrad::ops::cuda
