#pragma once
// Reductions over long arrays that give the same bits for any OpenMP thread count: the one
// implementation the quantizer's statistics, the optimizers' gradient norm and the diagnostics use.
//
// Floating-point addition is not associative, so a sum's bits depend on the order of its terms. Here
// the order is fixed by the array length alone: the array is cut into chunks whose length depends
// only on n, each chunk is reduced serially by one thread, and the chunk results are merged in chunk
// order on the calling thread. The per-chunk results live on the stack, so nothing is allocated.
#include <algorithm>
#include <array>
#include <cstddef>

namespace altgrad::quant {

// How an array is cut. Each user keeps its own constants: changing them changes its results' bits.
struct Chunking {
  std::size_t min_chunk;     // smallest unit of parallel work
  std::size_t max_chunks;    // bounds the per-chunk results on the stack
  std::size_t multiple = 1;  // chunk lengths are multiples of this
};

// The diagnostics' statistics (diag/).
inline constexpr Chunking kStatisticsChunking{std::size_t{1} << 14, 256};

// Elements per chunk for an array of n: a function of n only, never of the thread count.
constexpr std::size_t chunk_length(std::size_t n, Chunking c) {
  const std::size_t even_split = (n + c.max_chunks - 1) / c.max_chunks;
  const std::size_t length = std::max(c.min_chunk, even_split);
  return (length + c.multiple - 1) / c.multiple * c.multiple;
}

// Merges reduce_chunk(begin, end) of the chunks [begin, end) of [0, n) into Partial{}, in chunk
// order, with merge(total, part).
template <Chunking kChunking, typename Partial, typename ReduceChunk, typename Merge>
Partial reduce_in_chunks(std::size_t n, ReduceChunk&& reduce_chunk, Merge&& merge) {
  const std::size_t chunk = chunk_length(n, kChunking);
  const std::size_t chunks = (n + chunk - 1) / chunk;
  std::array<Partial, kChunking.max_chunks> partial{};
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::size_t c = 0; c < chunks; ++c) {
    partial[c] = reduce_chunk(c * chunk, std::min(n, (c + 1) * chunk));
  }
  Partial total{};
  for (std::size_t c = 0; c < chunks; ++c) merge(total, partial[c]);
  return total;
}

// The same with total += part; Partial's zero is Partial{}.
template <typename Partial, Chunking kChunking = kStatisticsChunking, typename ReduceChunk>
Partial reduce_in_chunks(std::size_t n, ReduceChunk&& reduce_chunk) {
  return reduce_in_chunks<kChunking, Partial>(n, reduce_chunk, [](Partial& total, const Partial& part) { total += part; });
}

}  // namespace altgrad::quant
