#pragma once
// The order in which the CPU kernels sum and take the maximum of a float row
// (ops/cpu/vector_math.hpp, lane_sum; ops/cpu/softmax_row.hpp), spelled out for one thread per
// partial sum: term i goes to partial sum i mod 16, added in order of i from +0, and the 16
// partial sums are then added pairwise (0+8, 1+9, ...; then 0+4, ...). A row's maximum is kept per
// lane the same way, and the largest of the 16 is the first largest in lane order.
//
// A CUDA kernel gives a row to 16 threads of a warp, thread l computing partial sum l and the
// shuffles doing the pairwise additions (ops/cuda/lane_group.cuh); SerialRow below does the same
// arithmetic on one host thread, which is how the host tests hold the row functions to the CPU's
// bits. Both are a "row group": the row functions (layernorm_math.hpp, softmax_math.hpp, ...) are
// written once against its members
//   first(), stride()    the elements this thread writes: first, first + stride, ...
//   leader()             whether this thread writes the row's scalars (a mean, a loss)
//   sum(n, term)         Σ term(i), i < n, in the lane order
//   max(n, value)        the row's largest value(i), in the lane order
//   serial_sum(n, term)  Σ term(i) in order of i from +0 (the CPU's rmsnorm sums rows so)
#include <cstddef>

#include "ops/cuda/host_device.hpp"

namespace altgrad::ops::cuda {

// The partial sums a row keeps: ops/cpu/vector_math.hpp's kSumLanes.
inline constexpr unsigned kSumLanes = 16;

// Partial sum `lane`: term(i) for i = lane, lane + 16, ... below n, added in order from +0. (The CPU
// adds +0 for the lanes past n in a row's last vector, which leaves a sum from +0 as it was.)
template <typename Term>
ALTGRAD_OPS_HD float lane_partial_sum(std::size_t n, unsigned lane, Term&& term) {
  float sum = 0.0f;
  for (std::size_t i = lane; i < n; i += kSumLanes) sum += term(i);
  return sum;
}

// The partial sums added pairwise; the result is partial[0].
ALTGRAD_OPS_HD inline float fold_partial_sums(float (&partial)[kSumLanes]) {
  for (unsigned half = kSumLanes / 2; half > 0; half /= 2)
    for (unsigned l = 0; l < half; ++l) partial[l] += partial[l + half];
  return partial[0];
}

// The largest of value(i) for i = lane, lane + 16, ... below n; −∞ for none. A lane keeps its
// maximum past a NaN, as the CPU's does.
template <typename Value>
ALTGRAD_OPS_HD float lane_partial_max(std::size_t n, unsigned lane, Value&& value) {
  float largest = -__builtin_huge_valf();
  for (std::size_t i = lane; i < n; i += kSumLanes) {
    const float v = value(i);
    largest = largest < v ? v : largest;
  }
  return largest;
}

// One step of std::max_element over the lanes' maxima, which keeps the first largest.
ALTGRAD_OPS_HD inline float first_largest(float largest, float candidate) {
  return largest < candidate ? candidate : largest;
}

// A row group of one host thread: each partial sum in turn, then the pairwise additions.
struct SerialRow {
  ALTGRAD_OPS_HD std::size_t first() const { return 0; }
  ALTGRAD_OPS_HD std::size_t stride() const { return 1; }
  ALTGRAD_OPS_HD bool leader() const { return true; }

  template <typename Term>
  ALTGRAD_OPS_HD float sum(std::size_t n, Term&& term) const {
    float partial[kSumLanes];
    for (unsigned l = 0; l < kSumLanes; ++l) partial[l] = lane_partial_sum(n, l, term);
    return fold_partial_sums(partial);
  }

  template <typename Value>
  ALTGRAD_OPS_HD float max(std::size_t n, Value&& value) const {
    float largest = lane_partial_max(n, 0, value);
    for (unsigned l = 1; l < kSumLanes; ++l) largest = first_largest(largest, lane_partial_max(n, l, value));
    return largest;
  }

  template <typename Term>
  ALTGRAD_OPS_HD float serial_sum(std::size_t n, Term&& term) const {
    float sum = 0.0f;
    for (std::size_t i = 0; i < n; ++i) sum += term(i);
    return sum;
  }
};

}  // namespace altgrad::ops::cuda
