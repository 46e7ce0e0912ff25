#include "quant/mx.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "format/bits.hpp"
#include "format/codec.hpp"
#include "quant/quantize.hpp"
#include "quant/vector_kernel.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace altgrad::quant {
namespace {

constexpr int kE8m0Bias = 127;
constexpr std::size_t kMinRowsPerTask = 16;
constexpr std::size_t kMaxTasks = 256;  // bounds the partial-statistics array on the stack
constexpr std::size_t kMaxColumnTile = 16;  // columns per vector of the column-wise kernel

void check_shapes(std::span<const float> in, std::span<float> out, std::size_t row_length,
                  const MxOptions& options, std::span<std::uint8_t> scale_codes) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("quantize_mx: " + why); };
  if (in.size() != out.size()) fail("input and output sizes differ");
  if (options.block_size == 0 || options.block_size > kMaxMxBlock) {
    fail("block size must be 1.." + std::to_string(kMaxMxBlock) + ", got " + std::to_string(options.block_size));
  }
  if (row_length == 0 || in.size() % row_length != 0) {
    fail("row length " + std::to_string(row_length) + " does not divide " + std::to_string(in.size()) + " elements");
  }
  const std::size_t blocks = in.size() / row_length * ((row_length + options.block_size - 1) / options.block_size);
  if (!scale_codes.empty() && scale_codes.size() != blocks) {
    fail("scale_codes has " + std::to_string(scale_codes.size()) + " entries for " + std::to_string(blocks) + " blocks");
  }
}

// max |x| over the finite elements of one block, on this thread (amax_of would open a parallel
// region per block, and counts Inf). Magnitude bits order like the values they encode.
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
  // Through memory: GCC 12's _mm512_reduce_max_epu32 trips -Wmaybe-uninitialized.
  alignas(64) std::uint32_t lanes[16];
  _mm512_store_si512(lanes, amax);
  return format::bits_float(*std::max_element(lanes, lanes + 16));
#else
  std::uint32_t amax = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t a = format::float_bits(x[i]) & ~format::kSignBit;
    amax = std::max(amax, a < format::kFloatInfBits ? a : 0u);
  }
  return format::bits_float(amax);
#endif
}

// 2^k as a double, for k within double's normal range.
double exp2_double(int k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52); }

}  // namespace

int mx_shared_exponent(const format::Format& element, float amax, MxScaleRule rule) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 0;
  const int emax = format::detail::floor_log2_bits(element.max_finite_bits);
  int k = format::detail::floor_log2_bits(format::float_bits(amax)) - emax;
  // amax · 2^−k > max finite, exactly (a float times a power of two is exact in double).
  if (rule == MxScaleRule::round_up && static_cast<double>(amax) > element.max_finite() * exp2_double(k)) ++k;
  return std::clamp(k, -kE8m0Bias, kE8m0Bias);
}

MxStats quantize_mx(const format::Format& element, std::span<const float> in, std::span<float> out,
                    std::size_t row_length, const MxOptions& options,
                    std::span<std::uint8_t> scale_codes) {
  check_shapes(in, out, row_length, options, scale_codes);
  const std::size_t rows = in.size() / row_length;
  const std::size_t block = options.block_size;
  const std::size_t blocks_per_row = (row_length + block - 1) / block;
  // Depends only on the shape, never on the thread count.
  const std::size_t rows_per_task = std::max(kMinRowsPerTask, (rows + kMaxTasks - 1) / kMaxTasks);
  const std::size_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  const bool stochastic = format::is_stochastic(options.rounding);

  // Per-task partials merged in task order: identical statistics for any thread count. Each call
  // quantizes up to kMaxMxBlock elements of a row: whole blocks, at least one.
  const std::size_t blocks_per_call = std::max<std::size_t>(1, kMaxMxBlock / block);
  MxStats partial[kMaxTasks];
#pragma omp parallel for schedule(static) if (tasks > 1)
  for (std::size_t t = 0; t < tasks; ++t) {
    std::uint32_t words[kMaxMxBlock];
    int exponents[kMaxMxBlock];
    std::uint64_t overflows[kMaxMxBlock];
    const std::size_t row_end = std::min(rows, (t + 1) * rows_per_task);
    for (std::size_t row = t * rows_per_task; row < row_end; ++row) {
      for (std::size_t first_block = 0; first_block < blocks_per_row; first_block += blocks_per_call) {
        const std::size_t blocks = std::min(blocks_per_call, blocks_per_row - first_block);
        const std::size_t begin = row * row_length + first_block * block;
        const std::size_t len = std::min(blocks * block, row_length - first_block * block);
        for (std::size_t j = 0; j < blocks; ++j) {
          const std::size_t block_len = std::min(block, len - j * block);
          exponents[j] = mx_shared_exponent(element, finite_block_amax(in.data() + begin + j * block, block_len), options.rule);
          if (!scale_codes.empty()) {
            scale_codes[row * blocks_per_row + first_block + j] = static_cast<std::uint8_t>(exponents[j] + kE8m0Bias);
          }
        }
        if (stochastic) fill_random(options.seed, options.stream, options.first_index + begin, {words, len});
        quantize_scaled_blocks(element, options.rounding, in.data() + begin, out.data() + begin, len, block, exponents,
                               words, overflows, partial[t].elements);
        for (std::size_t j = 0; j < blocks; ++j) partial[t].clipped_blocks += overflows[j] > 0;
      }
    }
    partial[t].blocks = (row_end - t * rows_per_task) * blocks_per_row;
  }
  MxStats total;
  for (std::size_t t = 0; t < tasks; ++t) {
    const MxStats& p = partial[t];
    total.elements.merge(p.elements);
    total.blocks += p.blocks;
    total.clipped_blocks += p.clipped_blocks;
  }
  return total;
}

namespace {

void check_column_shapes(std::span<const float> in, std::span<float> out, std::size_t cols, std::size_t run,
                         const MxOptions& options) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("quantize_mx_columns: " + why); };
  if (in.size() != out.size()) fail("input and output sizes differ");
  if (options.block_size == 0 || options.block_size > kMaxMxBlock) {
    fail("block size must be 1.." + std::to_string(kMaxMxBlock) + ", got " + std::to_string(options.block_size));
  }
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
  bool all_finite = true;
  for (std::size_t j = 0; j < width; ++j) {
    std::uint32_t largest = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::uint32_t a = format::float_bits(x[r * stride + j]) & ~format::kSignBit;
      all_finite = all_finite && a < format::kFloatInfBits;
      largest = std::max(largest, a < format::kFloatInfBits ? a : 0u);
    }
    amax[j] = format::bits_float(largest);
  }
  return all_finite;
#endif
}

// Quantizes `width` columns of one band through the row-wise kernel: each column's block is
// gathered into a contiguous run of a tile, quantized as one block and scattered back. The
// matrix is read and written row by row (a power-of-two row stride, walked down a column, would
// map every row to the same few cache sets); only the small tile is accessed with a stride.
void quantize_gathered_columns(const format::Format& element, const float* in, float* out, std::size_t cols,
                               const Band& band, std::size_t c0, std::size_t width, const int* exponents,
                               const std::uint32_t* words, format::Rounding rounding, MxStats& stats) {
  float tile_in[kMaxMxBlock], tile_out[kMaxMxBlock];
  std::uint64_t overflows[kMaxColumnTile];
  const std::size_t len = band.rows;
  for (std::size_t r = 0; r < len; ++r) {
    const float* row = in + (band.first_row + r) * cols + c0;
    for (std::size_t j = 0; j < width; ++j) tile_in[j * len + r] = row[j];
  }
  quantize_scaled_blocks(element, rounding, tile_in, tile_out, width * len, len, exponents, words, overflows,
                         stats.elements);
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
    const bool all_finite = column_finite_amax(first, cols, len, width, amax);
    for (std::size_t j = 0; j < width; ++j) {
      exponents[j] = mx_shared_exponent(element, amax[j], options.rule);
      if (stochastic) {
        const std::uint64_t first_word = options.first_index + band.word_base + (c0 + j) * run;
        fill_random(options.seed, options.stream, first_word, {words + j * len, len});
        if (!vector_tiles) continue;
        for (std::size_t r = 0; r < len; ++r) row_major_words[r * kMaxColumnTile + j] = words[j * len + r];
      }
    }
    std::uint32_t clipped = 0;
    float* first_out = out + band.first_row * cols + c0;
    if (vector_tiles && quantize_column_blocks_vector(element, options.rounding, first, first_out, cols, len, width, amax,
                                                      all_finite, exponents, stochastic ? row_major_words : nullptr,
                                                      clipped, stats.elements)) {
      stats.clipped_blocks += static_cast<std::uint64_t>(std::popcount(clipped));
    } else {
      quantize_gathered_columns(element, in, out, cols, band, c0, width, exponents, stochastic ? words : nullptr,
                                options.rounding, stats);
    }
    stats.blocks += width;
  }
}

}  // namespace

MxStats quantize_mx_columns(const format::Format& element, std::span<const float> in, std::span<float> out,
                            std::size_t cols, std::size_t run, const MxOptions& options) {
  check_column_shapes(in, out, cols, run, options);
  const std::size_t rows = in.size() / cols, block = options.block_size;
  const std::size_t bands = rows / run * ((run + block - 1) / block);
  // Depends only on the shape, never on the thread count; partials merge in task order.
  const std::size_t bands_per_task = (bands + kMaxTasks - 1) / kMaxTasks;
  const std::size_t tasks = (bands + bands_per_task - 1) / bands_per_task;
  MxStats partial[kMaxTasks];
#pragma omp parallel for schedule(static) if (tasks > 1 && in.size() >= kMinRowsPerTask * kMaxMxBlock)
  for (std::size_t t = 0; t < tasks; ++t) {
    const std::size_t end = std::min(bands, (t + 1) * bands_per_task);
    for (std::size_t b = t * bands_per_task; b < end; ++b) {
      quantize_band(element, in.data(), out.data(), cols, run, band_at(b, cols, run, block), options, partial[t]);
    }
  }
  MxStats total;
  for (std::size_t t = 0; t < tasks; ++t) {
    total.elements.merge(partial[t].elements);
    total.blocks += partial[t].blocks;
    total.clipped_blocks += partial[t].clipped_blocks;
  }
  return total;
}

}  // namespace altgrad::quant
