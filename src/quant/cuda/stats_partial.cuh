#pragma once
// Statistics reduced without atomics, in an order fixed by the launch's shape: each thread's
// ElementStats, the 32 of a warp by a fixed shuffle tree, a block's warps in warp order by its
// first thread (one partial per CUDA block); then reduce_partials folds the partials in index
// order (thread t of one block takes partials t, t + 256, ...) and reduces its threads the same
// way. Counts and the maximum are exact in any order; the double sums are the same bits for the
// same launch shape, which the launchers derive from the element count alone (never from the GPU's
// SM count), so a call repeats bit for bit on any GPU.
#include <cstdint>

#include "format/bits.hpp"
#include "quant/cuda/element_quantize.hpp"
#include "quant/stats.hpp"

namespace altgrad::quant::cuda {

inline constexpr unsigned kThreads = 256;   // threads per CUDA block
// CUDA blocks per launch, so partials per call: about ten waves of resident blocks on an H100 or
// H200 (132 SMs), so that a grid-stride loop's last wave leaves little of the GPU idle.
inline constexpr unsigned kMaxGrid = 4096;

struct StatsPartial {
  unsigned long long overflow, underflow, nan_inputs, inf_inputs, zero_inputs;
  unsigned long long clipped_blocks;  // MX blocks in which some element overflowed
  unsigned amax_bits;                 // max |x| over non-NaN x, as magnitude bits
  double sum_sq_error, sum_sq_input;
};

__device__ inline StatsPartial partial_of(const ElementStats& s, unsigned clipped_blocks) {
  return {s.overflow, s.underflow, s.nan_inputs, s.inf_inputs, s.zero_inputs, clipped_blocks, s.amax_bits,
          s.sum_sq_error, s.sum_sq_input};
}

__device__ inline StatsPartial combine(const StatsPartial& a, const StatsPartial& b) {
  return {a.overflow + b.overflow,
          a.underflow + b.underflow,
          a.nan_inputs + b.nan_inputs,
          a.inf_inputs + b.inf_inputs,
          a.zero_inputs + b.zero_inputs,
          a.clipped_blocks + b.clipped_blocks,
          a.amax_bits > b.amax_bits ? a.amax_bits : b.amax_bits,
          a.sum_sq_error + b.sum_sq_error,
          a.sum_sq_input + b.sum_sq_input};
}

// The partial of the lane `offset` above the calling one. The whole warp must call it.
__device__ inline StatsPartial shuffle_down(const StatsPartial& p, unsigned offset) {
  constexpr unsigned kAll = 0xFFFF'FFFFu;
  return {__shfl_down_sync(kAll, p.overflow, offset),       __shfl_down_sync(kAll, p.underflow, offset),
          __shfl_down_sync(kAll, p.nan_inputs, offset),     __shfl_down_sync(kAll, p.inf_inputs, offset),
          __shfl_down_sync(kAll, p.zero_inputs, offset),    __shfl_down_sync(kAll, p.clipped_blocks, offset),
          __shfl_down_sync(kAll, p.amax_bits, offset),      __shfl_down_sync(kAll, p.sum_sq_error, offset),
          __shfl_down_sync(kAll, p.sum_sq_input, offset)};
}

// The block's total, in thread 0 (the other threads' results are partial). Every thread of the
// block (kThreads of them) must call it, once per kernel.
__device__ inline StatsPartial block_total(StatsPartial p) {
  for (unsigned offset = 16; offset > 0; offset /= 2) p = combine(p, shuffle_down(p, offset));
  __shared__ StatsPartial warps[kThreads / 32];
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = p;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned w = 1; w < kThreads / 32; ++w) p = combine(p, warps[w]);
  }
  return p;
}

// A call's QuantStats from its total over `count` elements.
inline QuantStats quant_stats_of(const StatsPartial& total, std::uint64_t count) {
  QuantStats s;
  s.count = count;
  s.overflow = total.overflow;
  s.underflow = total.underflow;
  s.nan_inputs = total.nan_inputs;
  s.inf_inputs = total.inf_inputs;
  s.zero_inputs = total.zero_inputs;
  s.amax = format::bits_float(total.amax_bits);
  s.sum_sq_error = total.sum_sq_error;
  s.sum_sq_input = total.sum_sq_input;
  return s;
}

// The first `count` partials (device memory, room for kMaxGrid + 1) folded in the fixed order
// above, on the GPU; the total is written to partials[kMaxGrid] and copied back. Waits for the GPU.
StatsPartial reduce_partials(StatsPartial* partials, unsigned count, const char* caller);

}  // namespace altgrad::quant::cuda
