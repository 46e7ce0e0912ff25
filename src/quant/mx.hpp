#pragma once
// Block scaling: each block of consecutive elements along the reduction dimension of the GEMM that
// reads the copy shares one scale. By default that is MX (OCP Microscaling Formats v1.0): a power of
// two stored as an E8M0 code; the other scale formats (FP32, FP32 power of two, NVFP4's E4M3 under a
// tensor scale) live in quant/block_scale.hpp. quantize_mx takes blocks along rows (the contiguous
// dimension), quantize_mx_columns blocks down columns; docs/formats.md defines every rule and format.
#include <cstddef>
#include <cstdint>
#include <span>

#include "format/rounding.hpp"
#include "format/spec.hpp"
#include "quant/random_bits.hpp"
#include "quant/stats.hpp"

namespace altgrad::quant {

enum class MxScaleRule : std::uint8_t {
  floor,     // OCP: shared exponent = floor(log2 amax) − emax(element); the block max may clip
  round_up,  // the smallest 2^k that keeps amax · 2^−k ≤ max finite; never clips (TE MXFP8, torchao RCEIL)
  ceil,      // torchao CEIL: k = ceil(log2 amax) − emax; the block max lands at or below 2^emax
  even,      // torchao EVEN: amax rounded to the element's mantissa bits (halves up), then floor; may clip
  // Tseng et al. 2025: floor's k, and the elements scaled by a further 3/4 (x · (3/4) · 2^−k), so
  // that the block max lies below 6 · 2^(emax − 2) and stochastic rounding never clips E2M1
  three_quarters,
};

// The multiplier three_quarters applies beside 2^−k.
inline constexpr float kThreeQuarters = 0.75f;

// How a block's scale is stored, which fixes how it is computed (docs/formats.md, "Block scaling").
enum class BlockScaleFormat : std::uint8_t {
  e8m0,       // OCP MX: 2^k, k by the scale rule
  fp32,       // a multiplier s = fl(max finite / amax) (TE Float8BlockScaling, FP32 scales)
  fp32_pow2,  // that multiplier with its mantissa bits cleared (TE power_2_scale)
  e4m3,       // NVFP4: an E4M3 decode scale per block under a per-tensor FP32 scale
};

// The largest block of the vector kernels and of a recipe's numeric `block`. A longer block (a whole
// reduction axis: torchao's axiswise scaling) goes through quant/block_scale.hpp's multiplier path,
// under every scale format but E4M3, with the same values (its E8M0 scale multiplies by 2^−k).
inline constexpr std::size_t kMaxMxBlock = 1024;

// The most tasks one block-scaled call splits into: their partial statistics live on the stack.
inline constexpr std::size_t kMaxMxTasks = 256;

struct MxOptions {
  std::size_t block_size = 32;
  MxScaleRule rule = MxScaleRule::floor;
  format::Rounding rounding = format::Rounding::nearest_even;
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  std::uint64_t first_index = 0;
  BlockScaleFormat scale_format = BlockScaleFormat::e8m0;  // after the rest: brace initializers keep their meaning
  ErrorSums error_sums = ErrorSums::gather;                 // after the rest, for the same reason (quant/stats.hpp)
  int random_bits = kMaxRandomBits;                          // stochastic rounding's (quant/random_bits.hpp)
};

struct MxStats {
  QuantStats elements;
  std::uint64_t blocks = 0;
  // Blocks in which some element overflowed the element format, under every scale format. An NVFP4
  // block whose E4M3 scale flushed to zero is not clipped: its elements underflow.
  std::uint64_t clipped_blocks = 0;

  // Adds another share's counts (threads' partial statistics, summed in task order).
  void merge(const MxStats& other) {
    elements.merge(other.elements);
    blocks += other.blocks;
    clipped_blocks += other.clipped_blocks;
  }
};

// Whether blocks are scaled by 2^−k alone (E8M0 scales under every rule but three_quarters) in
// blocks the MX kernels take; the others go through quant/block_scale.hpp's multipliers.
inline bool scaled_by_exponents(const MxOptions& options) {
  return options.scale_format == BlockScaleFormat::e8m0 && options.rule != MxScaleRule::three_quarters &&
         options.block_size <= kMaxMxBlock;
}

// max |x| over the finite elements of one block (0 when there are none), on the calling thread.
float finite_block_amax(const float* x, std::size_t n);

// Shared exponent k (block scale 2^k, elements stored as x · 2^−k) for a block maximum, clamped to
// E8M0's range [−127, 127]; `amax` is the block's largest finite |x|. A zero or non-finite amax
// gives k = 0 (E8M0 code 127; TE and torchao store code 0, the values are 0 either way).
int mx_shared_exponent(const format::Format& element, float amax, MxScaleRule rule);

// mx_shared_exponent() of each amax, 16 lanes at a time (the same values).
// exponents.size() must equal amax.size().
void mx_shared_exponents(const format::Format& element, std::span<const float> amax, MxScaleRule rule,
                         std::span<int> exponents);

// Quantizes rows of `row_length` elements, block by block within each row (the last block of a row
// may be shorter). scale_codes, when given, receives one E8M0 code per block, row-major; it must be
// empty under the other scale formats and under three_quarters, whose scale is no E8M0 value.
MxStats quantize_mx(const format::Format& element, std::span<const float> in, std::span<float> out,
                    std::size_t row_length, const MxOptions& options,
                    std::span<std::uint8_t> scale_codes = {});

// The column-wise copy: `in` is row-major with `cols` columns, and each block runs down a column,
// over up to block_size consecutive rows, within runs of `run` rows that no block crosses (run
// divides the row count; the last block of a run may be shorter). This is the copy a GEMM reads
// when it reduces over the rows (dW = dYᵀ·X over tokens). Stochastic rounding numbers the elements
// in the run-transposed order: element (row s·run + r, column c) draws the word of index
// first_index + s·run·cols + c·run + r, so each block's words are consecutive.
MxStats quantize_mx_columns(const format::Format& element, std::span<const float> in, std::span<float> out,
                            std::size_t cols, std::size_t run, const MxOptions& options);

}  // namespace altgrad::quant
