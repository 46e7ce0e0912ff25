#pragma once
// The quantizer's launch shapes. Every kernel walks its work with a grid-stride loop over a grid
// capped at kMaxGrid blocks; the grid depends on the amount of work alone, never on the GPU, so
// which thread handles which elements, and so the order of the statistics' sums, is fixed by the
// call's shape.
#include <algorithm>
#include <cstddef>

#include "quant/cuda/stats_partial.cuh"

namespace altgrad::quant::cuda {

// CUDA blocks of kThreads for `threads` threads of work, 1 .. kMaxGrid.
inline unsigned grid_for(std::size_t threads) {
  return static_cast<unsigned>(std::clamp<std::size_t>((threads + kThreads - 1) / kThreads, 1, kMaxGrid));
}

__device__ inline std::size_t thread_index() { return blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; }
__device__ inline std::size_t grid_threads() { return gridDim.x * static_cast<std::size_t>(blockDim.x); }

}  // namespace altgrad::quant::cuda
