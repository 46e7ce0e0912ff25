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

namespace altgrad::quant {
namespace {

constexpr int kE8m0Bias = 127;
constexpr std::size_t kMaxBlock = kMaxMxBlock;
constexpr std::size_t kMinRowsPerTask = 16;
constexpr std::size_t kMaxTasks = 256;  // bounds the partial-statistics array on the stack

void check_shapes(std::span<const float> in, std::span<float> out, std::size_t row_length,
                  const MxOptions& options, std::span<std::uint8_t> scale_codes) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("quantize_mx: " + why); };
  if (in.size() != out.size()) fail("input and output sizes differ");
  if (options.block_size == 0 || options.block_size > kMaxBlock) {
    fail("block size must be 1.." + std::to_string(kMaxBlock) + ", got " + std::to_string(options.block_size));
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
  std::uint32_t amax = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t a = format::float_bits(x[i]) & ~format::kSignBit;
    amax = std::max(amax, a < format::kFloatInfBits ? a : 0u);
  }
  return format::bits_float(amax);
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
  // quantizes up to kMaxBlock elements of a row: whole blocks, at least one.
  const std::size_t blocks_per_call = std::max<std::size_t>(1, kMaxBlock / block);
  MxStats partial[kMaxTasks];
#pragma omp parallel for schedule(static) if (tasks > 1)
  for (std::size_t t = 0; t < tasks; ++t) {
    std::uint32_t words[kMaxBlock];
    int exponents[kMaxBlock];
    std::uint64_t overflows[kMaxBlock];
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

}  // namespace altgrad::quant
