#pragma once
// Layer normalization of one row, with the bits of the CPU's float kernel (ops/cpu/layernorm.cpp):
// its row sums in the CPU's lane order (ops/cuda/lane_sum.hpp), the same operations per element.
// Written against a row group: 16 threads of a warp on the GPU, SerialRow on the host.
//   out = (inp − mean) · rstd · weight + bias,   rstd = 1 / sqrt(var + eps)
#include <cmath>
#include <cstddef>

#include "ops/cuda/host_device.hpp"

namespace altgrad::ops::cuda {

// One row: y, x (C); weight (C); bias (C) or null. Overwrites y, and from the group's leader
// *mean and *rstd.
template <typename Group>
ALTGRAD_OPS_HD void layernorm_row_forward(const Group& group, float* y, float* mean, float* rstd, const float* x,
                                          const float* weight, const float* bias, std::size_t C, float eps) {
  const float m = group.sum(C, [x](std::size_t i) { return x[i]; }) / static_cast<float>(C);
  // Two passes: the variance from squared deviations does not cancel the way E[x²] − E[x]² does.
  const float squares = group.sum(C, [x, m](std::size_t i) { return (x[i] - m) * (x[i] - m); });
  const float s = 1.0f / sqrtf(squares / static_cast<float>(C) + eps);
  for (std::size_t c = group.first(); c < C; c += group.stride()) {
    float v = (x[c] - m) * s * weight[c];
    if (bias != nullptr) v += bias[c];
    y[c] = v;
  }
  if (group.leader()) {
    *mean = m;
    *rstd = s;
  }
}

// One row: adds to dx (C). With norm = (x − mean)·rstd and dnorm = weight·dout:
//   dx = rstd · (dnorm − mean(dnorm) − norm · mean(dnorm · norm))
template <typename Group>
ALTGRAD_OPS_HD void layernorm_row_backward(const Group& group, float* dx, const float* dy, const float* x,
                                           const float* weight, float mean, float rstd, std::size_t C) {
  const float m = mean, s = rstd;
  const float dnorm_sum = group.sum(C, [weight, dy](std::size_t i) { return weight[i] * dy[i]; });
  const float dnorm_norm_sum =
      group.sum(C, [weight, dy, x, m, s](std::size_t i) { return weight[i] * dy[i] * ((x[i] - m) * s); });
  const float dnorm_mean = dnorm_sum / static_cast<float>(C);
  const float dnorm_norm_mean = dnorm_norm_sum / static_cast<float>(C);
  for (std::size_t c = group.first(); c < C; c += group.stride()) {
    const float norm = (x[c] - m) * s;
    dx[c] += s * (weight[c] * dy[c] - dnorm_mean - norm * dnorm_norm_mean);
  }
}

// One row's term of dweight[c]; the kernels add the rows' terms in row order, as the CPU does.
ALTGRAD_OPS_HD inline float layernorm_dweight_term(float x, float mean, float rstd, float dy) {
  return (x - mean) * rstd * dy;
}

}  // namespace altgrad::ops::cuda
