#pragma once
// Reductions over long arrays that give the same bits for any OpenMP thread count.
//
// Floating-point addition is not associative, so a sum's bits depend on the order of its terms. Here
// the order is fixed by the array length alone: the array is cut into chunks whose size depends only
// on n, each chunk is reduced serially by one thread, and the chunk results are merged in chunk order
// on the calling thread. The per-chunk results live on the stack, so nothing is allocated.
#include <algorithm>
#include <array>
#include <cstddef>

namespace altgrad::diag {

inline constexpr std::size_t kMinChunk = std::size_t{1} << 14;  // smallest unit of parallel work
inline constexpr std::size_t kMaxChunks = 256;                  // bounds the per-chunk results

// Elements per chunk for an array of n: a function of n only, never of the thread count.
constexpr std::size_t chunk_length(std::size_t n) {
  return std::max(kMinChunk, (n + kMaxChunks - 1) / kMaxChunks);
}

// Returns Partial{} += reduce_chunk(begin, end) for the chunks [begin, end) of [0, n), in chunk
// order. Partial must be default-constructible to its zero and provide +=.
template <typename Partial, typename ReduceChunk>
Partial reduce_in_chunks(std::size_t n, ReduceChunk&& reduce_chunk) {
  const std::size_t chunk = chunk_length(n);
  const std::size_t chunks = (n + chunk - 1) / chunk;
  std::array<Partial, kMaxChunks> partial{};
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::size_t c = 0; c < chunks; ++c) {
    partial[c] = reduce_chunk(c * chunk, std::min(n, (c + 1) * chunk));
  }
  Partial total{};
  for (std::size_t c = 0; c < chunks; ++c) total += partial[c];
  return total;
}

}  // namespace altgrad::diag
