#include "quant/mx.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "format/bits.hpp"
#include "format/codec.hpp"
#include "quant/block_scale.hpp"
#include "quant/quantize.hpp"
#include "quant/vector_kernel.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace altgrad::quant {
namespace {

constexpr int kE8m0Bias = 127;
constexpr std::uint32_t kSmallestNormalBits = 1u << format::kFloatMantissaBits;  // FLT_MIN's bits
constexpr std::size_t kMinRowsPerTask = 16;
constexpr std::size_t kMaxColumnTile = 16;  // columns per vector of the column-wise kernel

// 16 float32 bit patterns in GCC's vector types (one AVX-512 register): with GCC 12, the
// intrinsics that take a register's upper half, and _mm512_reduce_max_epu32, trip
// -Wmaybe-uninitialized inside OpenMP regions.
using BitLanes = std::uint32_t __attribute__((vector_size(64)));
// Eight of them, or eight ints: AVX2's width, which SSE2 takes in pairs.
using BitLanes8 = std::uint32_t __attribute__((vector_size(32)));
using MaskLanes8 = std::int32_t __attribute__((vector_size(32)));  // comparisons: all ones where true

// Any block of at least one element, but NVFP4's: its E4M3 kernel gathers at most kMaxMxBlock.
std::string block_size_error(const MxOptions& options) {
  if (options.block_size == 0) return "block size must be at least 1";
  if (options.block_size > kMaxMxBlock && options.scale_format == BlockScaleFormat::e4m3) {
    return "E4M3 block scales take blocks of 1.." + std::to_string(kMaxMxBlock) + ", got " +
           std::to_string(options.block_size);
  }
  return "";
}

void check_shapes(std::span<const float> in, std::span<float> out, std::size_t row_length,
                  const MxOptions& options, std::span<std::uint8_t> scale_codes) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("quantize_mx: " + why); };
  if (in.size() != out.size()) fail("input and output sizes differ");
  if (const std::string why = block_size_error(options); !why.empty()) fail(why);
  if (row_length == 0 || in.size() % row_length != 0) {
    fail("row length " + std::to_string(row_length) + " does not divide " + std::to_string(in.size()) + " elements");
  }
  const std::size_t blocks = in.size() / row_length * ((row_length + options.block_size - 1) / options.block_size);
  if (!scale_codes.empty() && scale_codes.size() != blocks) {
    fail("scale_codes has " + std::to_string(scale_codes.size()) + " entries for " + std::to_string(blocks) + " blocks");
  }
  if (!scale_codes.empty() && !scaled_by_exponents(options)) {
    fail("scale_codes are the E8M0 codes of blocks of at most " + std::to_string(kMaxMxBlock) +
         " under every rule but three_quarters");
  }
}

// The largest of 8 unsigned lanes, halving in registers (a pass through memory costs more than
// the block's loads).
std::uint32_t largest_lane8(BitLanes8 x) {
  using Lanes4 = std::uint32_t __attribute__((vector_size(16)));
  const Lanes4 low4 = __builtin_shufflevector(x, x, 0, 1, 2, 3), high4 = __builtin_shufflevector(x, x, 4, 5, 6, 7);
  const Lanes4 four = low4 > high4 ? low4 : high4;
  const Lanes4 two = __builtin_shufflevector(four, four, 2, 3, 2, 3);
  const Lanes4 pair = four > two ? four : two;
  return std::max(pair[0], pair[1]);
}

#if defined(__AVX512F__)
// The largest of 16 unsigned lanes: the two halves' larger lanes, then largest_lane8.
std::uint32_t largest_lane(__m512i v) {
  const auto x = reinterpret_cast<BitLanes>(v);
  const BitLanes8 low8 = __builtin_shufflevector(x, x, 0, 1, 2, 3, 4, 5, 6, 7);
  const BitLanes8 high8 = __builtin_shufflevector(x, x, 8, 9, 10, 11, 12, 13, 14, 15);
  return largest_lane8(low8 > high8 ? low8 : high8);
}
#endif

// 2^k as a double, for k within double's normal range.
double exp2_double(int k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52); }

}  // namespace

// On this thread (amax_of would open a parallel region per block, and counts Inf). Magnitude bits
// order like the values they encode.
float finite_block_amax(const float* x, std::size_t n) {
#if defined(__AVX512F__)
  // 16 lanes at a time, the tail under a mask: max is associative, so the lanes change nothing.
  const __m512i magnitude_mask = _mm512_set1_epi32(static_cast<int>(~format::kSignBit));
  const __m512i inf = _mm512_set1_epi32(static_cast<int>(format::kFloatInfBits));
  __m512i amax = _mm512_setzero_si512();
  for (std::size_t i = 0; i < n; i += 16) {
    const __mmask16 in_block = n - i >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32(in_block, x + i), magnitude_mask);
    amax = _mm512_mask_max_epu32(amax, _mm512_cmplt_epu32_mask(a, inf), amax, a);
  }
  return format::bits_float(largest_lane(amax));
#else
  // 8 lanes at a time, the tail one by one: max is associative, so the lanes change nothing. GCC
  // does not vectorize the scalar loop (its select on finiteness defeats the max reduction), which
  // then cost as much as the quantizing itself.
  // Magnitudes are below 2^31, so the finiteness test compares them as signed lanes (one AVX2
  // instruction, where an unsigned comparison takes three); a non-finite lane counts as 0.
  BitLanes8 lanes{};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    BitLanes8 a;
    std::memcpy(&a, x + i, sizeof a);
    a &= ~format::kSignBit;
    a &= reinterpret_cast<BitLanes8>(reinterpret_cast<MaskLanes8>(a) < static_cast<std::int32_t>(format::kFloatInfBits));
    lanes = a > lanes ? a : lanes;
  }
  std::uint32_t amax = largest_lane8(lanes);
  for (; i < n; ++i) {
    const std::uint32_t a = format::float_bits(x[i]) & ~format::kSignBit;
    amax = std::max(amax, a < format::kFloatInfBits ? a : 0u);
  }
  return format::bits_float(amax);
#endif
}

int mx_shared_exponent(const format::Format& element, float amax, MxScaleRule rule) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 0;
  const int emax = format::detail::floor_log2_bits(element.max_finite_bits);
  const int e = format::detail::floor_log2_bits(format::float_bits(amax));
  // Every comparison is exact: a float times or over a power of two is exact in double.
  const double a = amax, significand = a / exp2_double(e);
  int k = e - emax;
  switch (rule) {
    case MxScaleRule::floor:
    case MxScaleRule::three_quarters:
      break;
    case MxScaleRule::round_up:  // amax · 2^−k > max finite
      k += a > element.max_finite() * exp2_double(k) ? 1 : 0;
      break;
    case MxScaleRule::ceil:  // amax is not a power of two
      k += significand > 1.0 ? 1 : 0;
      break;
    case MxScaleRule::even:  // amax rounds up into the next binade at the element's precision
      k += significand >= 2.0 - std::ldexp(1.0, -(element.spec.mantissa_bits + 1)) ? 1 : 0;
      break;
  }
  return std::clamp(k, -kE8m0Bias, kE8m0Bias);
}

namespace {

// mx_shared_exponent() of 16 amaxes at `amax`, into `exponents`; false, having written nothing,
// where a lane needs the scalar function (a subnormal amax). For a normal amax = (1 + f)·2^e the
// exponent is e − emax, plus one where f's bits reach the rule's `threshold` (round_up: amax > max
// finite · 2^k, with max finite = (1 + g)·2^emax, is f > g; ceil: f > 0; even: f ≥ 1 − 2^−(m+1);
// floor: never, threshold 2^23). Two halves of eight lanes, compared as signed (AVX2 has no
// unsigned comparison; GCC spells 16-lane unsigned ones out lane by lane there): a negative amax's
// bits are negative, so, as Inf and NaN, it takes k = 0.
bool shared_exponents_16(const float* amax, int emax, std::int32_t threshold, int* exponents) {
  constexpr auto kInfBits = static_cast<std::int32_t>(format::kFloatInfBits);
  constexpr auto kNormalBits = static_cast<std::int32_t>(kSmallestNormalBits);
  MaskLanes8 k[2], subnormal = {};
  for (int h = 0; h < 2; ++h) {
    MaskLanes8 a;
    std::memcpy(&a, amax + 8 * h, sizeof a);
    const MaskLanes8 no_scale = (a <= 0) | (a >= kInfBits);
    subnormal |= (a < kNormalBits) & ~no_scale;
    k[h] = (a >> format::kFloatMantissaBits) - (format::kFloatBias + emax);
    k[h] -= (a & static_cast<std::int32_t>(format::kFloatFractionMask)) >= threshold;  // true is −1
    k[h] = k[h] < -kE8m0Bias ? MaskLanes8{} - kE8m0Bias : k[h];
    k[h] = k[h] > kE8m0Bias ? MaskLanes8{} + kE8m0Bias : k[h];
    k[h] = no_scale ? MaskLanes8{} : k[h];
  }
  std::uint64_t words[4];
  std::memcpy(words, &subnormal, sizeof words);
  if ((words[0] | words[1] | words[2] | words[3]) != 0) return false;
  std::memcpy(exponents, k, sizeof k);
  return true;
}

// The fraction bits (of a normal amax) from which `rule` adds one to the floor exponent.
std::int32_t rule_threshold(const format::Format& element, MxScaleRule rule) {
  constexpr auto kNever = static_cast<std::int32_t>(format::kFloatFractionMask + 1u);
  switch (rule) {
    case MxScaleRule::floor:
    case MxScaleRule::three_quarters:
      break;
    case MxScaleRule::round_up:
      return static_cast<std::int32_t>(element.max_finite_bits & format::kFloatFractionMask) + 1;
    case MxScaleRule::ceil:
      return 1;
    case MxScaleRule::even:
      return kNever - (std::int32_t{1} << (format::kFloatMantissaBits - 1 - element.spec.mantissa_bits));
  }
  return kNever;
}

}  // namespace

void mx_shared_exponents(const format::Format& element, std::span<const float> amax, MxScaleRule rule,
                         std::span<int> exponents) {
  if (exponents.size() != amax.size()) {
    throw std::invalid_argument("mx_shared_exponents: " + std::to_string(amax.size()) + " amaxes but room for " +
                                std::to_string(exponents.size()) + " exponents");
  }
  std::size_t i = 0;
  // The fraction test needs max finite to be a normal float32, as every element format's is.
  if (element.max_finite_bits >= kSmallestNormalBits) {
    const int emax = format::detail::floor_log2_bits(element.max_finite_bits);
    const std::int32_t threshold = rule_threshold(element, rule);
    for (; i + 16 <= amax.size(); i += 16) {
      if (shared_exponents_16(amax.data() + i, emax, threshold, exponents.data() + i)) continue;
      for (std::size_t j = i; j < i + 16; ++j) exponents[j] = mx_shared_exponent(element, amax[j], rule);
    }
  }
  for (; i < amax.size(); ++i) exponents[i] = mx_shared_exponent(element, amax[i], rule);
}

MxStats quantize_mx(const format::Format& element, std::span<const float> in, std::span<float> out,
                    std::size_t row_length, const MxOptions& options,
                    std::span<std::uint8_t> scale_codes) {
  check_shapes(in, out, row_length, options, scale_codes);
  if (!scaled_by_exponents(options)) return quantize_scaled_rows(element, in, out, row_length, options);
  const std::size_t rows = in.size() / row_length;
  const std::size_t block = options.block_size;
  const std::size_t blocks_per_row = (row_length + block - 1) / block;
  // Depends only on the shape, never on the thread count.
  const std::size_t rows_per_task = std::max(kMinRowsPerTask, (rows + kMaxMxTasks - 1) / kMaxMxTasks);
  const std::size_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  const bool stochastic = format::is_stochastic(options.rounding);

  // Per-task partials merged in task order: identical statistics for any thread count. Each call
  // quantizes up to kMaxMxBlock elements: whole blocks, at least one, of one row, or several whole
  // rows where rows are whole blocks; the statistics are summed row by row either way.
  const std::size_t blocks_per_call = std::max<std::size_t>(1, kMaxMxBlock / block);
  const std::size_t rows_per_call =
      row_length % block == 0 && row_length <= kMaxMxBlock ? kMaxMxBlock / row_length : 1;
  MxStats partial[kMaxMxTasks];
#pragma omp parallel for schedule(static) if (tasks > 1)
  for (std::size_t t = 0; t < tasks; ++t) {
    std::uint32_t words[kMaxMxBlock];
    float amaxes[kMaxMxBlock];
    int exponents[kMaxMxBlock];
    std::uint64_t overflows[kMaxMxBlock];
    // `blocks` blocks from element `begin` (len elements), block index `first_code` among all rows.
    const auto quantize_run = [&](std::size_t begin, std::size_t len, std::size_t blocks, std::size_t first_code) {
      for (std::size_t j = 0; j < blocks; ++j) {
        amaxes[j] = finite_block_amax(in.data() + begin + j * block, std::min(block, len - j * block));
      }
      mx_shared_exponents(element, {amaxes, blocks}, options.rule, {exponents, blocks});
      if (!scale_codes.empty()) {
        for (std::size_t j = 0; j < blocks; ++j) {
          scale_codes[first_code + j] = static_cast<std::uint8_t>(exponents[j] + kE8m0Bias);
        }
      }
      if (stochastic) fill_random(options.seed, options.stream, options.first_index + begin, {words, len}, options.random_bits);
      quantize_scaled_blocks(element, options.rounding, in.data() + begin, out.data() + begin, len, block, exponents,
                             words, overflows, partial[t].elements, std::min(len, row_length), options.error_sums);
      for (std::size_t j = 0; j < blocks; ++j) partial[t].clipped_blocks += overflows[j] > 0;
    };
    const std::size_t row_end = std::min(rows, (t + 1) * rows_per_task);
    for (std::size_t row = t * rows_per_task; row < row_end; row += rows_per_call) {
      if (rows_per_call > 1) {
        const std::size_t len = std::min(rows_per_call, row_end - row) * row_length;
        quantize_run(row * row_length, len, len / block, row * blocks_per_row);
        continue;
      }
      for (std::size_t first_block = 0; first_block < blocks_per_row; first_block += blocks_per_call) {
        const std::size_t blocks = std::min(blocks_per_call, blocks_per_row - first_block);
        quantize_run(row * row_length + first_block * block,
                     std::min(blocks * block, row_length - first_block * block), blocks,
                     row * blocks_per_row + first_block);
      }
    }
    partial[t].blocks = (row_end - t * rows_per_task) * blocks_per_row;
  }
  MxStats total;
  for (std::size_t t = 0; t < tasks; ++t) total.merge(partial[t]);
  return total;
}

namespace {

void check_column_shapes(std::span<const float> in, std::span<float> out, std::size_t cols, std::size_t run,
                         const MxOptions& options) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("quantize_mx_columns: " + why); };
  if (in.size() != out.size()) fail("input and output sizes differ");
  if (const std::string why = block_size_error(options); !why.empty()) fail(why);
  if (cols == 0 || in.size() % cols != 0) {
    fail(std::to_string(cols) + " columns do not divide " + std::to_string(in.size()) + " elements");
  }
  const std::size_t rows = in.size() / cols;
  if (run == 0 || rows % run != 0) fail("run " + std::to_string(run) + " does not divide " + std::to_string(rows) + " rows");
}

// A band: up to one block of consecutive rows of one run, across every column.
struct Band {
  std::size_t first_row, rows, word_base;  // word_base: the run-transposed index of (first_row, column 0)
};

Band band_at(std::size_t b, std::size_t cols, std::size_t run, std::size_t block) {
  const std::size_t per_run = (run + block - 1) / block;
  const std::size_t segment = b / per_run, offset = (b % per_run) * block;
  return {segment * run + offset, std::min(block, run - offset), segment * run * cols + offset};
}

// Each column's largest finite |x| over `rows` rows of `width` ≤ 16 adjacent columns (row stride
// `stride`), and whether they are all finite. Magnitude bits order like the values they encode.
bool column_finite_amax(const float* x, std::size_t stride, std::size_t rows, std::size_t width, float* amax) {
#if defined(__AVX512F__)
  const __m512i magnitude_mask = _mm512_set1_epi32(static_cast<int>(~format::kSignBit));
  const __m512i inf = _mm512_set1_epi32(static_cast<int>(format::kFloatInfBits));
  const auto valid = static_cast<__mmask16>((1u << width) - 1u);
  __m512i largest = _mm512_setzero_si512();
  __mmask16 not_finite = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32(valid, x + r * stride), magnitude_mask);
    const __mmask16 finite = _mm512_cmplt_epu32_mask(a, inf);
    largest = _mm512_mask_max_epu32(largest, finite, largest, a);
    not_finite |= valid & static_cast<__mmask16>(~finite);
  }
  alignas(64) std::uint32_t lanes[16];
  _mm512_store_si512(lanes, largest);
  for (std::size_t j = 0; j < width; ++j) amax[j] = format::bits_float(lanes[j]);
  return not_finite == 0;
#else
  // Row by row, as the AVX-512 loop: each row's columns are adjacent (a walk down one column at a
  // time touches a new line per element). A full tile's row is two 8-lane vectors, compared as
  // signed (magnitudes are below 2^31; AVX2 has no unsigned comparison); a narrower tile goes
  // element by element.
  MaskLanes8 largest[2] = {};
  MaskLanes8 not_finite = {};
  std::uint32_t narrow[kMaxColumnTile] = {};
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = x + r * stride;
    if (width == kMaxColumnTile) {
      for (int h = 0; h < 2; ++h) {
        MaskLanes8 a;
        std::memcpy(&a, row + 8 * h, sizeof a);
        a &= static_cast<std::int32_t>(~format::kSignBit);
        const MaskLanes8 finite = a < static_cast<std::int32_t>(format::kFloatInfBits);  // all ones where true
        not_finite |= ~finite;
        a &= finite;  // a non-finite lane counts as 0
        largest[h] = a > largest[h] ? a : largest[h];
      }
      continue;
    }
    for (std::size_t j = 0; j < width; ++j) {
      const std::uint32_t a = format::float_bits(row[j]) & ~format::kSignBit;
      const bool finite = a < format::kFloatInfBits;
      not_finite[0] |= finite ? 0 : 1;
      narrow[j] = std::max(narrow[j], finite ? a : 0u);
    }
  }
  if (width == kMaxColumnTile) {
    std::memcpy(amax, largest, sizeof largest);  // the magnitudes' bits are the floats'
  } else {
    for (std::size_t j = 0; j < width; ++j) amax[j] = format::bits_float(narrow[j]);
  }
  std::uint64_t words[4];
  std::memcpy(words, &not_finite, sizeof words);
  return (words[0] | words[1] | words[2] | words[3]) == 0;
#endif
}

// Asks for the next tile's lines, its input's and its output's, while this one is quantized: a
// tile takes one line from each of its rows, more streams than the hardware prefetchers follow.
void prefetch_tile(const float* in, float* out, std::size_t stride, std::size_t rows) {
  for (std::size_t r = 0; r < rows; ++r) {
    __builtin_prefetch(in + r * stride, 0);
    __builtin_prefetch(out + r * stride, 1);
  }
}

// Quantizes `width` columns of one band through the row-wise kernel: each column's block is
// gathered into a contiguous run of a tile, quantized as one block and scattered back. The
// matrix is read and written row by row (a power-of-two row stride, walked down a column, would
// map every row to the same few cache sets); only the small tile is accessed with a stride.
void quantize_gathered_columns(const format::Format& element, const float* in, float* out, std::size_t cols,
                               const Band& band, std::size_t c0, std::size_t width, const int* exponents,
                               const std::uint32_t* words, const MxOptions& options, MxStats& stats) {
  float tile_in[kMaxMxBlock], tile_out[kMaxMxBlock];
  std::uint64_t overflows[kMaxColumnTile];
  const std::size_t len = band.rows;
  for (std::size_t r = 0; r < len; ++r) {
    const float* row = in + (band.first_row + r) * cols + c0;
    for (std::size_t j = 0; j < width; ++j) tile_in[j * len + r] = row[j];
  }
  quantize_scaled_blocks(element, options.rounding, tile_in, tile_out, width * len, len, exponents, words, overflows,
                         stats.elements, 0, options.error_sums);
  for (std::size_t r = 0; r < len; ++r) {
    float* row = out + (band.first_row + r) * cols + c0;
    for (std::size_t j = 0; j < width; ++j) row[j] = tile_out[j * len + r];
  }
  for (std::size_t j = 0; j < width; ++j) stats.clipped_blocks += overflows[j] > 0;
}

// Quantizes one band, up to 16 columns at a time: in place down the columns by the vector kernel,
// one row's columns per vector, or where it cannot (no AVX-512, a non-finite value, an extreme
// scale) gathered into blocks for the row-wise kernel. Both give the same values and counts.
void quantize_band(const format::Format& element, const float* in, float* out, std::size_t cols, std::size_t run,
                   const Band& band, const MxOptions& options, MxStats& stats) {
  std::uint32_t words[kMaxMxBlock], row_major_words[kMaxMxBlock];
  int exponents[kMaxColumnTile];
  float amax[kMaxColumnTile];
  const std::size_t len = band.rows;
  const std::size_t tile_cols = std::clamp<std::size_t>(kMaxMxBlock / len, 1, kMaxColumnTile);
  const bool stochastic = format::is_stochastic(options.rounding);
  // The vector kernel's words lie row by row, 16 to a row: blocks of up to 64 rows fit the buffer.
  const bool vector_tiles = len * kMaxColumnTile <= kMaxMxBlock;
  for (std::size_t c0 = 0; c0 < cols; c0 += tile_cols) {
    const std::size_t width = std::min(tile_cols, cols - c0);
    const float* first = in + band.first_row * cols + c0;
    if (c0 + tile_cols < cols) prefetch_tile(first + tile_cols, out + band.first_row * cols + c0 + tile_cols, cols, len);
    const bool all_finite = column_finite_amax(first, cols, len, width, amax);
    mx_shared_exponents(element, {amax, width}, options.rule, {exponents, width});
    for (std::size_t j = 0; j < width && stochastic; ++j) {
      const std::uint64_t first_word = options.first_index + band.word_base + (c0 + j) * run;
      fill_random(options.seed, options.stream, first_word, {words + j * len, len}, options.random_bits);
      if (!vector_tiles) continue;
      for (std::size_t r = 0; r < len; ++r) row_major_words[r * kMaxColumnTile + j] = words[j * len + r];
    }
    std::uint32_t clipped = 0;
    float* first_out = out + band.first_row * cols + c0;
    if (vector_tiles && quantize_column_blocks_vector(element, options.rounding, first, first_out, cols, len, width, amax,
                                                      all_finite, exponents, stochastic ? row_major_words : nullptr,
                                                      clipped, stats.elements, options.error_sums)) {
      stats.clipped_blocks += static_cast<std::uint64_t>(std::popcount(clipped));
    } else {
      quantize_gathered_columns(element, in, out, cols, band, c0, width, exponents, stochastic ? words : nullptr,
                                options, stats);
    }
    stats.blocks += width;
  }
}

}  // namespace

MxStats quantize_mx_columns(const format::Format& element, std::span<const float> in, std::span<float> out,
                            std::size_t cols, std::size_t run, const MxOptions& options) {
  check_column_shapes(in, out, cols, run, options);
  if (!scaled_by_exponents(options)) return quantize_scaled_columns(element, in, out, cols, run, options);
  const std::size_t rows = in.size() / cols, block = options.block_size;
  const std::size_t bands = rows / run * ((run + block - 1) / block);
  // Depends only on the shape, never on the thread count; partials merge in task order.
  const std::size_t bands_per_task = (bands + kMaxMxTasks - 1) / kMaxMxTasks;
  const std::size_t tasks = (bands + bands_per_task - 1) / bands_per_task;
  MxStats partial[kMaxMxTasks];
#pragma omp parallel for schedule(static) if (tasks > 1 && in.size() >= kMinRowsPerTask * kMaxMxBlock)
  for (std::size_t t = 0; t < tasks; ++t) {
    const std::size_t end = std::min(bands, (t + 1) * bands_per_task);
    for (std::size_t b = t * bands_per_task; b < end; ++b) {
      quantize_band(element, in.data(), out.data(), cols, run, band_at(b, cols, run, block), options, partial[t]);
    }
  }
  MxStats total;
  for (std::size_t t = 0; t < tasks; ++t) total.merge(partial[t]);
  return total;
}

}  // namespace altgrad::quant
