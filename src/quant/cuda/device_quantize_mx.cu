// MX block quantization on the GPU (quant/cuda/device_quantize.hpp, quantize_mx): the kernel, then
// its launcher.
//
// Eight lanes of a warp share one MX block, four elements each per pass, so a block of 32 (OCP
// MX's) is one float4 per lane: the lanes take the block's largest finite |x| (a shuffle tree; a
// max is order independent), each computes the block's exponent from it as the CPU does
// (block_exponent.hpp), and each quantizes its own elements at 2^−k (element_quantize.hpp). A
// longer block takes several passes, a shorter one leaves lanes idle.
#include <stdexcept>
#include <string>

#include "format/codec.hpp"
#include "quant/cuda/block_exponent.hpp"
#include "quant/cuda/cuda_status.cuh"
#include "quant/cuda/device_quantize.hpp"
#include "quant/cuda/element_quantize.hpp"
#include "quant/cuda/launch_grid.cuh"
#include "quant/cuda/quad_access.cuh"
#include "quant/cuda/random_quad.hpp"
#include "quant/cuda/stats_partial.cuh"

namespace altgrad::quant::cuda {
namespace {

using format::Rounding;

constexpr unsigned kLanesPerBlock = 8;
constexpr std::size_t kPassElements = 4 * kLanesPerBlock;  // elements of a block per pass

// What every thread of an MX launch reads: the call's constants, decided once on the host.
struct MxLaunch {
  format::Format element;
  bool simple_grid;  // format::has_simple_grid(element)
  bool vector;       // in and out 16-byte aligned and rows and blocks whole quads: quads move as float4
  MxScaleRule rule;
  std::size_t row_length, block, blocks_per_row, blocks;  // blocks: of all rows
  std::uint64_t seed, stream, first_index;
  std::uint8_t* scale_codes;  // one per block, or null
  std::uint32_t random_mask;  // quant/random_bits.hpp: set in every word
};

// Block b of the rows: elements [begin, end) of the array.
struct BlockSpan {
  std::size_t begin, end;
};

__device__ inline BlockSpan block_span(const MxLaunch& p, std::size_t b) {
  const std::size_t row = b / p.blocks_per_row, column = b % p.blocks_per_row * p.block;
  const std::size_t begin = row * p.row_length + column;
  const std::size_t rest = p.row_length - column;
  return {begin, begin + (rest < p.block ? rest : p.block)};
}

// Each group of kLanesPerBlock lanes quantizes blocks group, group + groups, ...; one StatsPartial
// per CUDA block into partials[blockIdx.x], its error sums with kSums only. Element i of the array
// draws the word of index first_index + i, as on the CPU.
template <Rounding R, bool kSums>
__global__ void __launch_bounds__(kThreads)
    quantize_mx_blocks(MxLaunch p, const float* in, float* out, StatsPartial* partials) {
  const unsigned lane = threadIdx.x % kLanesPerBlock;
  // This group's lanes within the warp (groups never straddle warps: kThreads is a multiple of 32).
  const unsigned group_mask = 0xFFu << (threadIdx.x % 32 / kLanesPerBlock * kLanesPerBlock);
  const std::size_t groups = grid_threads() / kLanesPerBlock;
  ElementStats stats;
  unsigned clipped = 0;
  for (std::size_t b = thread_index() / kLanesPerBlock; b < p.blocks; b += groups) {
    const BlockSpan span = block_span(p, b);
    const std::size_t mine = span.begin + 4 * lane;  // this lane's first quad
    // The block's largest finite magnitude: the lane's, then the group's. The first quad stays in
    // registers for the second pass (all of a 32-element block).
    float first[4] = {};
    unsigned first_count = 0;
    std::uint32_t amax = 0;
    for (std::size_t i = mine; i < span.end; i += kPassElements) {
      float x[4];
      const unsigned count = load_quad(in, i, span.end, p.vector, x);
#pragma unroll
      for (unsigned j = 0; j < 4; ++j) {
        const std::uint32_t a = j < count ? finite_magnitude_bits(x[j]) : 0u;
        amax = a > amax ? a : amax;
      }
      if (i == mine) {
#pragma unroll
        for (unsigned j = 0; j < 4; ++j) first[j] = x[j];
        first_count = count;
      }
    }
    for (unsigned offset = kLanesPerBlock / 2; offset > 0; offset /= 2) {
      const std::uint32_t other = __shfl_xor_sync(group_mask, amax, offset, kLanesPerBlock);
      amax = other > amax ? other : amax;
    }
    const int k = block_shared_exponent(p.element, format::bits_float(amax), p.rule);
    if (lane == 0 && p.scale_codes != nullptr) p.scale_codes[b] = static_cast<std::uint8_t>(k + kE8m0Bias);
    const float scale = format::exp2_exact(-k);
    const Unscale unscale = Unscale::for_scale(scale);
    // Each lane reads and writes only its own quads, in both passes: in place is safe.
    std::uint32_t overflowed = 0;
    for (std::size_t i = mine; i < span.end; i += kPassElements) {
      float x[4], y[4];
      unsigned count = first_count;
      if (i == mine) {
#pragma unroll
        for (unsigned j = 0; j < 4; ++j) x[j] = first[j];
      } else {
        count = load_quad(in, i, span.end, p.vector, x);
      }
      std::uint32_t words[4] = {};
      if constexpr (format::is_stochastic(R)) random_quad(p.seed, p.stream, p.first_index + i, words, p.random_mask);
#pragma unroll
      for (unsigned j = 0; j < 4; ++j) {
        if (j >= count) break;
        const QuantizedElement q = quantize_element<R>(p.element, p.simple_grid, x[j], scale, unscale, words[j]);
        y[j] = q.value;
        stats.template add<kSums>(x[j], q);
        overflowed |= q.overflow;
      }
      store_quad(out, i, count, p.vector, y);
    }
    if (__any_sync(group_mask, overflowed) && lane == 0) ++clipped;
  }
  const StatsPartial total = block_total(partial_of(stats, clipped));
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <Rounding R>
void launch_mx(unsigned grid, const MxLaunch& p, const float* in, float* out, StatsPartial* partials,
               ErrorSums sums) {
  if (sums == ErrorSums::gather) {
    quantize_mx_blocks<R, true><<<grid, kThreads>>>(p, in, out, partials);
  } else {
    quantize_mx_blocks<R, false><<<grid, kThreads>>>(p, in, out, partials);
  }
}

void launch_mx(Rounding rounding, unsigned grid, const MxLaunch& p, const float* in, float* out,
               StatsPartial* partials, ErrorSums sums) {
  switch (rounding) {
    case Rounding::nearest_even: return launch_mx<Rounding::nearest_even>(grid, p, in, out, partials, sums);
    case Rounding::nearest_away: return launch_mx<Rounding::nearest_away>(grid, p, in, out, partials, sums);
    case Rounding::toward_zero: return launch_mx<Rounding::toward_zero>(grid, p, in, out, partials, sums);
    case Rounding::toward_positive: return launch_mx<Rounding::toward_positive>(grid, p, in, out, partials, sums);
    case Rounding::toward_negative: return launch_mx<Rounding::toward_negative>(grid, p, in, out, partials, sums);
    case Rounding::odd: return launch_mx<Rounding::odd>(grid, p, in, out, partials, sums);
    case Rounding::stochastic: return launch_mx<Rounding::stochastic>(grid, p, in, out, partials, sums);
    case Rounding::stochastic_equal: return launch_mx<Rounding::stochastic_equal>(grid, p, in, out, partials, sums);
  }
  throw std::invalid_argument("device quantize_mx: unknown rounding " + std::to_string(static_cast<int>(rounding)));
}

// quant::quantize_mx's shape checks, in its words.
void check_shapes(std::size_t in, std::size_t out, std::size_t row_length, const MxOptions& options,
                  std::size_t scale_codes) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("device quantize_mx: " + why); };
  // FP32 and E4M3 block scales (quant/block_scale.hpp) are the CPU's alone for now.
  if (options.scale_format != BlockScaleFormat::e8m0) fail("only E8M0 block scales run on the GPU");
  if (in != out) fail("input has " + std::to_string(in) + " elements but output has " + std::to_string(out));
  if (options.block_size == 0 || options.block_size > kMaxMxBlock) {
    fail("block size must be 1.." + std::to_string(kMaxMxBlock) + ", got " + std::to_string(options.block_size));
  }
  if (row_length == 0 || in % row_length != 0) {
    fail("row length " + std::to_string(row_length) + " does not divide " + std::to_string(in) + " elements");
  }
  const std::size_t blocks = in / row_length * ((row_length + options.block_size - 1) / options.block_size);
  if (scale_codes != 0 && scale_codes != blocks) {
    fail("scale_codes has " + std::to_string(scale_codes) + " entries for " + std::to_string(blocks) + " blocks");
  }
}

}  // namespace

MxStats DeviceQuantizer::quantize_mx(const format::Format& element, std::span<const float> in, std::span<float> out,
                                     std::size_t row_length, const MxOptions& options,
                                     std::span<std::uint8_t> scale_codes) {
  constexpr const char* kCaller = "device quantize_mx";
  check_shapes(in.size(), out.size(), row_length, options, scale_codes.size());
  MxStats stats;
  if (in.empty()) return stats;
  const std::size_t blocks_per_row = (row_length + options.block_size - 1) / options.block_size;
  const MxLaunch p{element,
                   format::has_simple_grid(element),
                   quad_aligned(in.data()) && quad_aligned(out.data()) && row_length % 4 == 0 &&
                       options.block_size % 4 == 0,
                   options.rule,
                   row_length,
                   options.block_size,
                   blocks_per_row,
                   in.size() / row_length * blocks_per_row,
                   options.seed,
                   options.stream,
                   options.first_index,
                   scale_codes.empty() ? nullptr : scale_codes.data(),
                   random_bits_mask(options.random_bits)};
  auto* partials = static_cast<StatsPartial*>(partials_);
  const unsigned grid = grid_for(p.blocks * kLanesPerBlock);
  launch_mx(options.rounding, grid, p, in.data(), out.data(), partials, options.error_sums);
  check_cuda(cudaGetLastError(), kCaller, "launch of the quantizing kernel");
  const StatsPartial total = reduce_partials(partials, grid, kCaller);
  stats.elements = quant_stats_of(total, in.size());
  stats.blocks = p.blocks;
  stats.clipped_blocks = total.clipped_blocks;
  return stats;
}

}  // namespace altgrad::quant::cuda
