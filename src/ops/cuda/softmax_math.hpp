#pragma once
// The softmax of one row and the cross-entropy terms, with the bits of the CPU's float kernels
// (ops/cpu/softmax_row.hpp, ops/cpu/softmax_cross_entropy.cpp): maximum and sum in the lane order
// (ops/cuda/lane_sum.hpp), exponentials by exp_float, the quotient as a product with 1/sum. Written
// against a row group.
#include <cmath>
#include <cstddef>

#include "ops/cuda/float_exp.hpp"
#include "ops/cuda/host_device.hpp"

namespace altgrad::ops::cuda {

struct SoftmaxStats {
  float max;  // the row's largest input, subtracted before exp so it cannot overflow
  float sum;  // Σ exp(in − max); logsumexp(in) = log(sum) + max
};

// out[i] = exp(in[i] − max) / sum for i < n (n >= 1); out may be in. Each thread reads back only
// the elements it wrote.
template <typename Group>
ALTGRAD_OPS_HD SoftmaxStats softmax_row(const Group& group, const float* in, float* out, std::size_t n) {
  const float max = group.max(n, [in](std::size_t i) { return in[i]; });
  for (std::size_t i = group.first(); i < n; i += group.stride()) out[i] = exp_float(in[i] - max);
  const float sum = group.sum(n, [out](std::size_t i) { return out[i]; });
  const float inverse_sum = 1.0f / sum;
  for (std::size_t i = group.first(); i < n; i += group.stride()) out[i] *= inverse_sum;
  return {max, sum};
}

// −log probs[target] = logsumexp(logits) − logits[target], both sides shifted by the maximum, so it
// stays finite where the target's probability underflows to 0. The logarithm is logf: libm's on the
// host (the CPU kernel's), CUDA's on the GPU (within 1 ulp of it).
ALTGRAD_OPS_HD inline float cross_entropy_loss(SoftmaxStats stats, float target_logit) {
  return logf(stats.sum) - (target_logit - stats.max);
}

// d loss / d logit: (prob − onehot) · dloss.
ALTGRAD_OPS_HD inline float cross_entropy_gradient(float prob, bool is_target, float dloss) {
  return (prob - (is_target ? 1.0f : 0.0f)) * dloss;
}

}  // namespace altgrad::ops::cuda
