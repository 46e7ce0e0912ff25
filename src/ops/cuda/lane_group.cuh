#pragma once
// A row group on the GPU (ops/cuda/lane_sum.hpp): 16 threads of a warp share one row, thread l
// computing partial sum l (the elements l, l + 16, ...) and writing those elements. The pairwise
// additions of the partial sums are XOR shuffles: at each step lane l adds lane l ^ half's sum,
// which for l < half is the CPU's partial[l] + partial[l + half] and for the others the same sum
// with its operands swapped (the same bits), so every lane ends with the CPU's total.
//
// A warp holds two groups; each shuffles among its own 16 lanes (mask and width), so one group may
// run out of rows before the other. All 16 threads of a group must call each reduction.
#include <cstddef>

#include "ops/cuda/lane_sum.hpp"

namespace altgrad::ops::cuda {

class LaneGroup {
 public:
  // For the calling thread: its lane in its group of the block's threads.
  __device__ LaneGroup()
      : lane_(threadIdx.x % kSumLanes), mask_(0xFFFFu << (threadIdx.x % warpSize / kSumLanes * kSumLanes)) {}

  // The group's index among all groups of the grid, and how many there are.
  __device__ static std::size_t index() {
    return (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / kSumLanes;
  }
  __device__ static std::size_t count() { return gridDim.x * static_cast<std::size_t>(blockDim.x) / kSumLanes; }

  __device__ std::size_t first() const { return lane_; }
  __device__ std::size_t stride() const { return kSumLanes; }
  __device__ bool leader() const { return lane_ == 0; }

  template <typename Term>
  __device__ float sum(std::size_t n, Term&& term) const {
    float s = lane_partial_sum(n, lane_, term);
    for (unsigned half = kSumLanes / 2; half > 0; half /= 2) s += __shfl_xor_sync(mask_, s, half, kSumLanes);
    return s;
  }

  // std::max_element's walk over the lanes' maxima, in every lane.
  template <typename Value>
  __device__ float max(std::size_t n, Value&& value) const {
    const float mine = lane_partial_max(n, lane_, value);
    float largest = __shfl_sync(mask_, mine, 0, kSumLanes);
    for (unsigned l = 1; l < kSumLanes; ++l) largest = first_largest(largest, __shfl_sync(mask_, mine, l, kSumLanes));
    return largest;
  }

  // The leader adds the row in order; the others wait for its sum.
  template <typename Term>
  __device__ float serial_sum(std::size_t n, Term&& term) const {
    float s = 0.0f;
    if (lane_ == 0) {
      for (std::size_t i = 0; i < n; ++i) s += term(i);
    }
    return __shfl_sync(mask_, s, 0, kSumLanes);
  }

 private:
  unsigned lane_;
  unsigned mask_;
};

}  // namespace altgrad::ops::cuda
