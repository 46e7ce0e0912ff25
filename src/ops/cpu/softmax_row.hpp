#pragma once
// The numerically stable softmax of one row, shared by attention and the cross-entropy head.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "ops/cpu/vector_math.hpp"

namespace altgrad::ops::cpu {

template <typename Scalar>
struct SoftmaxRow {
  Scalar max;  // the row's largest input, subtracted before exp so it cannot overflow
  Scalar sum;  // Σ exp(in − max); logsumexp(in) = log(sum) + max
};

// out[i] = exp(in[i] − max) / sum over n >= 1 inputs; out may be in.
template <typename Scalar>
SoftmaxRow<Scalar> softmax_row(const Scalar* in, Scalar* out, std::size_t n) {
  const Scalar max = *std::max_element(in, in + n);
  Scalar sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = std::exp(in[i] - max);
    sum += out[i];
  }
  const Scalar inverse_sum = Scalar{1} / sum;
  for (std::size_t i = 0; i < n; ++i) out[i] *= inverse_sum;
  return {max, sum};
}

// The float row given its maximum, vectorized: exp_lanes and a lane_sum (ops/cpu/vector_math.hpp)
// in place of libm's exp and the serial sum, a row's last values as one vector too.
inline SoftmaxRow<float> softmax_row_from_max(const float* in, float* out, std::size_t n, float max) {
  std::size_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    const FloatLanes e = exp_lanes(AtLanes{i}(in) - max);
    std::memcpy(out + i, &e, sizeof e);
  }
  if (i < n) store_first_lanes(out + i, exp_lanes(AtTail{i, n - i}(in) - max), n - i);
  const float sum = lane_sum(n, [out](auto at) { return at(out); });
  const float inverse_sum = 1.0f / sum;
  for (std::size_t j = 0; j < n; ++j) out[j] *= inverse_sum;
  return {max, sum};
}

inline SoftmaxRow<float> softmax_row(const float* in, float* out, std::size_t n) {
  return softmax_row_from_max(in, out, n, lane_max(in, n));
}

}  // namespace altgrad::ops::cpu
