#pragma once
// Softmax and cross-entropy loss fused, per row:
//   probs = softmax(logits),   loss = −log probs[target] = logsumexp(logits) − logits[target]
//
//   logits, probs (N, V)   N = B·T rows, V = vocabulary size
//   targets       (N)      class index in [0, V) per row
//   losses        (N)      one loss per row: the mean over rows (nanoGPT's F.cross_entropy) is
//                          the caller's, passed to the backward pass as dlosses = 1/N
#include <cstddef>
#include <cstdint>
#include <span>

namespace altgrad::ops::cpu {

// Overwrites losses and probs. The row maximum is subtracted before exp and the loss comes from
// logsumexp, so it stays finite when the target's probability underflows to 0. Throws
// std::invalid_argument on a size mismatch or a target outside [0, V).
template <typename Scalar>
void softmax_cross_entropy_forward(std::span<Scalar> losses, std::span<Scalar> probs, std::span<const Scalar> logits,
                                   std::span<const std::int32_t> targets, std::size_t N, std::size_t V);

// Adds (probs − onehot(target)) · dlosses[row] to dlogits, row by row (dlosses (N)).
template <typename Scalar>
void softmax_cross_entropy_backward(std::span<Scalar> dlogits, std::span<const Scalar> dlosses,
                                    std::span<const Scalar> probs, std::span<const std::int32_t> targets, std::size_t N,
                                    std::size_t V);

}  // namespace altgrad::ops::cpu
