#pragma once
// RMS normalization of one row, with the bits of the CPU's float kernel (ops/cpu/rmsnorm.cpp),
// whose row sums are serial (one add after another, from +0), not in the lane order. Written
// against a row group (ops/cuda/lane_sum.hpp).
//   out = inp · rstd · weight,   rstd = 1 / sqrt(mean(inp²) + eps)
#include <cmath>
#include <cstddef>

#include "ops/cuda/host_device.hpp"

namespace altgrad::ops::cuda {

// One row: y, x (C); weight (C). Overwrites y, and from the group's leader *rstd.
template <typename Group>
ALTGRAD_OPS_HD void rmsnorm_row_forward(const Group& group, float* y, float* rstd, const float* x, const float* weight,
                                        std::size_t C, float eps) {
  const float squares = group.serial_sum(C, [x](std::size_t i) { return x[i] * x[i]; });
  const float s = 1.0f / sqrtf(squares / static_cast<float>(C) + eps);
  for (std::size_t c = group.first(); c < C; c += group.stride()) y[c] = x[c] * s * weight[c];
  if (group.leader()) *rstd = s;
}

// One row: adds to dx (C). With norm = x·rstd and dnorm = weight·dout:
//   dx = rstd · (dnorm − norm · mean(dnorm · norm))
template <typename Group>
ALTGRAD_OPS_HD void rmsnorm_row_backward(const Group& group, float* dx, const float* dy, const float* x,
                                         const float* weight, float rstd, std::size_t C) {
  const float s = rstd;
  const float dnorm_norm_sum =
      group.serial_sum(C, [weight, dy, x, s](std::size_t i) { return weight[i] * dy[i] * (x[i] * s); });
  const float dnorm_norm_mean = dnorm_norm_sum / static_cast<float>(C);
  for (std::size_t c = group.first(); c < C; c += group.stride()) {
    dx[c] += s * (weight[c] * dy[c] - x[c] * s * dnorm_norm_mean);
  }
}

// One row's term of dweight[c], added in row order.
ALTGRAD_OPS_HD inline float rmsnorm_dweight_term(float x, float rstd, float dy) { return x * rstd * dy; }

}  // namespace altgrad::ops::cuda
