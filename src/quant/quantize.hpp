#pragma once
// Fake quantization of float arrays: out = Q(fl(x · scale)) / scale, with statistics from the same
// pass. Multithreaded (OpenMP) over fixed-size chunks whose partial statistics are merged in chunk
// order, so results — stochastic bits and statistic sums alike — are identical for any thread count.
#include <cstdint>
#include <span>

#include "format/rounding.hpp"
#include "format/spec.hpp"
#include "quant/random_words.hpp"
#include "quant/stats.hpp"

namespace altgrad::quant {

struct QuantizeOptions {
  format::Rounding rounding = format::Rounding::nearest_even;
  float scale = 1.0f;
  // Stochastic rounding draws Philox4x32-10 keyed by (seed, stream) at counter first_index + i.
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  std::uint64_t first_index = 0;
  // Optional per-code counts (size = the format's code count, 8-bit formats only); added to.
  std::span<std::uint64_t> code_histogram = {};
  ErrorSums error_sums = ErrorSums::gather;  // after the rest: existing brace initializers keep their meaning
  // Stochastic rounding's random bits per element (quant/random_bits.hpp); 32: the whole word.
  int random_bits = kMaxRandomBits;
};

// out may alias in (in-place). Throws std::invalid_argument on mismatched sizes or a histogram the
// format does not allow.
QuantStats quantize(const format::Format& f, std::span<const float> in, std::span<float> out,
                    const QuantizeOptions& options);

inline QuantStats quantize_in_place(const format::Format& f, std::span<float> data,
                                    const QuantizeOptions& options) {
  return quantize(f, data, data, options);
}

// Quantizes n contiguous elements on the calling thread; the building block of the quantizers.
// `random` holds one word per element (ignored unless the rounding is stochastic); `histogram`
// may be null. Uses the vector kernel where this build has one for (f, rounding). Under
// ErrorSums::skip the kernels leave the two error sums out of their loops.
void quantize_block(const format::Format& f, format::Rounding rounding, const float* in, float* out,
                    std::size_t n, float scale, const std::uint32_t* random,
                    std::uint64_t* histogram, QuantStats& stats, ErrorSums sums = ErrorSums::gather);

// quantize_block without a histogram, through the portable kernel: every format and rounding, the
// definition the vector kernel is held to.
void quantize_block_portable(const format::Format& f, format::Rounding rounding, const float* in, float* out,
                             std::size_t n, float scale, const std::uint32_t* random, QuantStats& stats,
                             ErrorSums sums = ErrorSums::gather);

// Blocks of `block` consecutive elements (the last may be shorter) on the calling thread, block b
// at scale 2^−exponents[b] (MX's shared exponents); overflows[b] receives how many of block b's
// elements overflowed. Uses the vector kernel where this build has one for (f, rounding). The
// statistics are added to `stats` once per `segment` elements (a multiple of block; 0: all n), as
// if each segment were a call of its own: one call over several matrix rows sums as a call per
// row would.
void quantize_scaled_blocks(const format::Format& f, format::Rounding rounding, const float* in, float* out,
                            std::size_t n, std::size_t block, const int* exponents, const std::uint32_t* random,
                            std::uint64_t* overflows, QuantStats& stats, std::size_t segment = 0,
                            ErrorSums sums = ErrorSums::gather);

// quantize_scaled_blocks through the portable kernel, which adds each block's statistics in turn
// (so any segment gives the same sums).
void quantize_scaled_blocks_portable(const format::Format& f, format::Rounding rounding, const float* in,
                                     float* out, std::size_t n, std::size_t block, const int* exponents,
                                     const std::uint32_t* random, std::uint64_t* overflows, QuantStats& stats,
                                     ErrorSums sums = ErrorSums::gather);

}  // namespace altgrad::quant
