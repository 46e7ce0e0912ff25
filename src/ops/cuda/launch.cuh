#pragma once
// Grid sizes. Every kernel walks its work items with a grid-stride loop, so a grid is capped; the
// items a thread takes are fixed by the shapes alone, and no result depends on which thread ran it.
#include <algorithm>
#include <cstddef>

namespace altgrad::ops::cuda {

inline constexpr unsigned kBlockThreads = 256;
inline constexpr std::size_t kMaxBlocks = std::size_t{1} << 20;

// Blocks of kBlockThreads for `threads` threads (at least one block).
inline unsigned blocks_for(std::size_t threads) {
  return static_cast<unsigned>(std::clamp<std::size_t>((threads + kBlockThreads - 1) / kBlockThreads, 1, kMaxBlocks));
}

// The first work item of the calling thread, and the grid's stride.
__device__ inline std::size_t thread_index() { return blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; }
__device__ inline std::size_t grid_threads() { return gridDim.x * static_cast<std::size_t>(blockDim.x); }

}  // namespace altgrad::ops::cuda
