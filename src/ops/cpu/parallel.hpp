#pragma once
// How the CPU kernels split work between OpenMP threads.
//
// Every value a kernel writes is computed by one thread, in an order fixed by the shapes alone:
// rows of an activation are independent, and a sum over rows (a bias or norm-weight gradient, an
// embedding scatter) is owned column by column by one thread that adds the rows in order. So the
// kernels use no atomics and their results are the same bits for any thread count. The GEMMs are
// cut into tiles by their shape alone (ops/cpu/gemm.hpp), for the same reason.
#include <algorithm>
#include <cstddef>

namespace altgrad::ops::cpu {

// Below this many elements touched, starting a parallel region costs more than it saves.
inline constexpr std::size_t kMinParallelWork = std::size_t{1} << 14;

// Column-block width for sums over rows: two cache lines of floats, so the threads that own
// neighbouring blocks rarely write to the same line.
inline constexpr std::size_t kColumnBlock = 32;

// Calls body(begin, end) for each block [begin, end) of `columns`, the blocks in parallel when
// `work` (elements touched in all) is worth it. A body that walks the rows in order within its
// block accumulates every column in row order, whatever the thread count.
template <typename Body>
void for_each_column_block(std::size_t columns, std::size_t work, Body&& body) {
  const std::size_t blocks = (columns + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for schedule(static) if (blocks > 1 && work >= kMinParallelWork)
  for (std::size_t block = 0; block < blocks; ++block) {
    body(block * kColumnBlock, std::min(columns, (block + 1) * kColumnBlock));
  }
}

}  // namespace altgrad::ops::cpu
