#include "quant/block_scale.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "format/bits.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "quant/quantize.hpp"
#include "quant/random_words.hpp"
#include "quant/scaled_input.hpp"

namespace altgrad::quant {
namespace {

constexpr float kFloatMax = std::numeric_limits<float>::max();
constexpr float kE4m3Max = 448.0f;  // NVFP4's block scales are E4M3: the tensor scale aims a block max at it
constexpr std::size_t kMinBlocksPerTask = 64;  // below this a thread costs more than it saves

const format::Format& e4m3() {
  static const format::Format f = format::make_format(format::parse_format("e4m3"));
  return f;
}

// Where one block lies: `len` elements from element `first`, `stride` apart, drawing the random
// words from index `word` on (a block's words are consecutive in both layouts).
struct BlockPlace {
  std::size_t first, stride, len;
  std::uint64_t word;
};

// One element's share of the statistics, as the per-tensor quantizer counts them (quant/stats.hpp);
// the error sums only under ErrorSums::gather.
[[gnu::always_inline]] inline void count_element(QuantStats& s, float x, float y, bool overflow, bool underflow,
                                                 ErrorSums sums) {
  const std::uint32_t a = format::float_bits(x) & ~format::kSignBit;
  ++s.count;
  s.overflow += overflow ? 1 : 0;
  s.underflow += underflow ? 1 : 0;
  s.nan_inputs += a > format::kFloatInfBits ? 1 : 0;
  s.inf_inputs += a == format::kFloatInfBits ? 1 : 0;
  s.zero_inputs += a == 0 ? 1 : 0;
  if (a <= format::kFloatInfBits) s.amax = std::max(s.amax, format::bits_float(a));
  if (a >= format::kFloatInfBits || sums == ErrorSums::skip) return;
  const double err = static_cast<double>(x) - static_cast<double>(y);
  s.sum_sq_error += std::isfinite(y) ? err * err : std::numeric_limits<double>::infinity();
  s.sum_sq_input += static_cast<double>(x) * static_cast<double>(x);
}

// The multiplier of an FP32, FP32 power-of-two or E8M0 block: under E8M0, 2^−k by the scale rule,
// or three_quarters' (3/4)·2^−k.
float multiplier_of(const CallContext& c, float amax) {
  if (c.options.scale_format != BlockScaleFormat::e8m0) return block_multiplier(c.element, amax, c.options.scale_format);
  if (c.options.rule == MxScaleRule::three_quarters) return three_quarters_multiplier(c.element, amax);
  return std::ldexp(1.0f, -mx_shared_exponent(c.element, amax, c.options.rule));  // exact: k in [−127, 127]
}

// FP32, FP32 power-of-two and three-quarters scales, and E8M0 blocks longer than the MX kernels
// take: the per-tensor quantizer's kernel at the block's multiplier.
void quantize_fp32_block(const CallContext& c, const float* x, float* y, std::size_t n, const std::uint32_t* words,
                         MxStats& stats) {
  const float s = multiplier_of(c, finite_block_amax(x, n));
  QuantStats block;
  quantize_block(c.element, c.options.rounding, x, y, n, s, words, nullptr, block, c.options.error_sums);
  stats.clipped_blocks += block.overflow > 0 ? 1 : 0;
  stats.elements.merge(block);
}

// NVFP4: codes q = Q(fl(x·e)), values q · s_b · A / range. q · s_b · A is exact in double (at most
// 11 + 4 + 24 significant bits); the division rounds once in double and again to FP32, which is one
// correct rounding here: a quotient of a 39-bit integer by range (at most 11 significant bits) that
// is not an FP32 midpoint lies further than 2^−53 of itself from one. A flushed block (s_b = 0) has codes
// ±max finite (x·FLT_MAX saturates) but values 0: its nonzero elements count as underflows, not
// overflows. `round(bits, word)` is the element format's rounding, as format::Rounded.
template <typename Round>
void quantize_e4m3_block_with(const CallContext& c, const float* x, float* y, std::size_t n, const std::uint32_t* words,
                              MxStats& stats, Round round) {
  static constexpr std::uint32_t kNoWords[kMaxMxBlock] = {};
  const std::uint32_t* w = words ? words : kNoWords;
  const float scale = e4m3_block_scale(c.element, finite_block_amax(x, n), c.tensor);
  const float factor = e4m3_element_factor(scale, c.tensor);
  const double decode = static_cast<double>(scale) * static_cast<double>(c.tensor.amax);
  const double range = c.tensor.range;
  // Rounding first, in a loop of selects that the compiler vectorizes; the statistics after.
  std::uint32_t overflow[kMaxMxBlock], underflow[kMaxMxBlock];
  for (std::size_t i = 0; i < n; ++i) {
    const ScaledInput product = scale_input(x[i], factor);
    const format::Rounded q = round(product.bits, w[i]);
    y[i] = static_cast<float>(static_cast<double>(format::bits_float(q.bits)) * decode / range);
    overflow[i] = product.overflow | q.overflow;
    underflow[i] = product.underflow | q.underflow;
  }
  const bool flushed = scale == 0.0f;
  bool clipped = false;
  for (std::size_t i = 0; i < n; ++i) {
    const bool finite_nonzero = std::isfinite(x[i]) && x[i] != 0.0f;
    const bool over = !flushed && overflow[i] != 0;
    const bool under = flushed ? finite_nonzero : underflow[i] != 0;
    clipped |= over;
    count_element(stats.elements, x[i], y[i], over, under, c.options.error_sums);
  }
  stats.clipped_blocks += clipped ? 1 : 0;
}

// The two roundings training uses, on formats with a simple grid (every FP4 and FP6 element
// format), through codec.hpp's shortcuts, which tests hold to round_to_grid bit for bit; the rest
// through the runtime dispatch.
void quantize_e4m3_block(const CallContext& c, const float* x, float* y, std::size_t n, const std::uint32_t* words,
                         MxStats& stats) {
  const format::Format& f = c.element;
  const format::Rounding mode = c.options.rounding;
  if (format::has_simple_grid(f) && mode == format::Rounding::nearest_even) {
    return quantize_e4m3_block_with(c, x, y, n, words, stats, [&f](std::uint32_t bits, std::uint32_t) {
      return format::round_nearest_even_simple(f, bits);
    });
  }
  if (format::has_simple_grid(f) && mode == format::Rounding::stochastic) {
    return quantize_e4m3_block_with(c, x, y, n, words, stats, [&f](std::uint32_t bits, std::uint32_t word) {
      return format::round_stochastic_simple(f, bits, word);
    });
  }
  quantize_e4m3_block_with(c, x, y, n, words, stats, [&f, mode](std::uint32_t bits, std::uint32_t word) {
    format::RoundFlags flags;
    const std::uint32_t q = format::round_bits(f, mode, bits, word, flags);
    return format::Rounded{q, flags.overflow ? 1u : 0u, flags.underflow ? 1u : 0u};
  });
}

// A task's gather buffers: on the stack for blocks the MX kernels take, on the heap for longer ones
// (a whole reduction axis).
class Tile {
 public:
  explicit Tile(std::size_t longest) {
    if (longest <= kMaxMxBlock) return;
    long_values_.resize(2 * longest);
    long_words_.resize(longest);
    in = long_values_.data();
    out = in + longest;
    words = long_words_.data();
  }
  Tile(const Tile&) = delete;
  Tile& operator=(const Tile&) = delete;
  float* in = stack_in_;
  float* out = stack_out_;
  std::uint32_t* words = stack_words_;

 private:
  float stack_in_[kMaxMxBlock], stack_out_[kMaxMxBlock];
  std::uint32_t stack_words_[kMaxMxBlock];
  std::vector<float> long_values_;
  std::vector<std::uint32_t> long_words_;
};

// Every block `place(b)` for b < blocks, gathered into a contiguous tile, quantized, scattered
// back. Tasks depend only on the shape and their partials merge in task order: the same bits and
// sums for any thread count.
template <typename Place>
MxStats quantize_placed_blocks(const CallContext& c, std::span<const float> in, std::span<float> out,
                               std::size_t blocks, Place place) {
  const std::size_t per_task = std::max(kMinBlocksPerTask, (blocks + kMaxMxTasks - 1) / kMaxMxTasks);
  const std::size_t tasks = (blocks + per_task - 1) / per_task;
  const bool stochastic = format::is_stochastic(c.options.rounding);
  MxStats partial[kMaxMxTasks];
#pragma omp parallel for schedule(static) if (tasks > 1)
  for (std::size_t t = 0; t < tasks; ++t) {
    Tile tile(c.options.block_size);
    const std::size_t end = std::min(blocks, (t + 1) * per_task);
    for (std::size_t b = t * per_task; b < end; ++b) {
      const BlockPlace p = place(b);
      for (std::size_t i = 0; i < p.len; ++i) tile.in[i] = in[p.first + i * p.stride];
      if (stochastic) fill_random(c.options.seed, c.options.stream, p.word, {tile.words, p.len}, c.options.random_bits);
      quantize_one_block(c, tile.in, tile.out, p.len, stochastic ? tile.words : nullptr, partial[t]);
      for (std::size_t i = 0; i < p.len; ++i) out[p.first + i * p.stride] = tile.out[i];
      ++partial[t].blocks;
    }
  }
  MxStats total;
  for (std::size_t t = 0; t < tasks; ++t) total.merge(partial[t]);
  return total;
}

}  // namespace

CallContext context_for(const format::Format& element, std::span<const float> in, const MxOptions& options) {
  CallContext c{element, options, {}};
  if (options.scale_format == BlockScaleFormat::e4m3) {
    c.tensor = tensor_scale(element, finite_block_amax(in.data(), in.size()));
  }
  return c;
}

void quantize_one_block(const CallContext& c, const float* x, float* y, std::size_t n, const std::uint32_t* words,
                        MxStats& stats) {
  if (c.options.scale_format == BlockScaleFormat::e4m3) return quantize_e4m3_block(c, x, y, n, words, stats);
  quantize_fp32_block(c, x, y, n, words, stats);
}

float block_multiplier(const format::Format& element, float amax, BlockScaleFormat scale_format) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 1.0f;
  const float s = std::min(element.max_finite() / amax, kFloatMax);  // a tiny amax: FLT_MAX, not Inf
  return scale_format == BlockScaleFormat::fp32_pow2 ? power_of_two_scale(s) : s;
}

float power_of_two_scale(float s) { return format::bits_float(format::float_bits(s) & ~format::kFloatFractionMask); }

float three_quarters_multiplier(const format::Format& element, float amax) {
  return std::ldexp(kThreeQuarters, -mx_shared_exponent(element, amax, MxScaleRule::floor));
}

TensorScale tensor_scale(const format::Format& element, float amax) {
  TensorScale t;
  t.amax = amax;
  t.range = kE4m3Max * element.max_finite();  // exact: both have at most 11 significant bits
  if (amax > 0.0f) t.encode = std::min(t.range / amax, kFloatMax);
  t.decode = 1.0f / t.encode;
  return t;
}

float e4m3_block_scale(const format::Format& element, float block_amax, const TensorScale& tensor) {
  const float inverse_max = 1.0f / element.max_finite();
  const float per_amax = tensor.encode * inverse_max;
  const float u = std::min(block_amax * per_amax, kFloatMax);
  return format::bits_float(format::round_nearest_even_simple(e4m3(), format::float_bits(u)).bits);
}

float e4m3_element_factor(float block_scale, const TensorScale& tensor) {
  const float decode = block_scale * tensor.decode;
  return decode > 0.0f ? std::min(1.0f / decode, kFloatMax) : kFloatMax;
}

MxStats quantize_scaled_rows(const format::Format& element, std::span<const float> in, std::span<float> out,
                             std::size_t row_length, const MxOptions& options) {
  const std::size_t block = options.block_size;
  const std::size_t per_row = (row_length + block - 1) / block;
  const std::size_t blocks = in.size() / row_length * per_row;
  const auto place = [&](std::size_t b) {
    const std::size_t start = (b % per_row) * block;
    const std::size_t first = b / per_row * row_length + start;
    return BlockPlace{first, 1, std::min(block, row_length - start), options.first_index + first};
  };
  return quantize_placed_blocks(context_for(element, in, options), in, out, blocks, place);
}

MxStats quantize_scaled_columns(const format::Format& element, std::span<const float> in, std::span<float> out,
                                std::size_t cols, std::size_t run, const MxOptions& options) {
  const std::size_t block = options.block_size;
  const std::size_t per_run = (run + block - 1) / block;
  const std::size_t bands = in.size() / cols / run * per_run;
  // Band-major, then column: block (band, c) holds column c over up to `block` rows of one run,
  // its words from the run-transposed index of its first element (quant/mx.hpp).
  const auto place = [&](std::size_t b) {
    const std::size_t band = b / cols, c = b % cols;
    const std::size_t segment = band / per_run, offset = (band % per_run) * block;
    const std::size_t first_row = segment * run + offset;
    return BlockPlace{first_row * cols + c, cols, std::min(block, run - offset),
                      options.first_index + segment * run * cols + offset + c * run};
  };
  return quantize_placed_blocks(context_for(element, in, options), in, out, bands * cols, place);
}

}  // namespace altgrad::quant
