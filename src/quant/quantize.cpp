#include "quant/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "format/codec.hpp"
#include "quant/chunked_reduction.hpp"
#include "quant/scaled_input.hpp"
#include "quant/vector_kernel.hpp"

namespace altgrad::quant {
namespace {

using format::Format;
using format::Rounding;

constexpr std::size_t kTile = 1024;           // elements per random-word buffer (stack)
// At least 16 tiles per chunk, at most 256 chunks, whole tiles: a chunk's random words start at a
// tile boundary.
constexpr Chunking kQuantizeChunking{16 * kTile, 256, kTile};

constexpr std::size_t kStep = 1024;  // elements per rounding step: its side arrays live on the stack

// Bit 0: overflow, bit 1: underflow, of the product or of the rounding.
inline std::uint8_t event_bits(const ScaledInput& x, const format::Rounded& r) {
  return static_cast<std::uint8_t>((x.overflow | r.overflow) | ((x.underflow | r.underflow) << 1));
}

// Rounds n <= kStep elements into `out`, recording per element whether it overflowed (bit 0) or
// underflowed (bit 1); no reductions, which keeps the loop simple enough for GCC to vectorize.
// `Unscale` turns a rounded value back: exact division by the scale in general, multiplication by
// its exact reciprocal when the scale is a power of two (the same correctly rounded result, cheaper).
template <Rounding R, typename Unscale>
void round_step(const Format& format, const float* in, float* out, std::size_t n, float scale,
                Unscale unscale, const std::uint32_t* random, std::uint8_t* events) {
  const Format f = format;  // a local copy: stores through `out` cannot alias it, so it stays in registers
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t word = 0;
    if constexpr (format::is_stochastic(R)) word = random[i];
    const ScaledInput x = scale_input(in[i], scale);
    const format::Rounded rounded = format::round_to_grid<R>(f, x.bits, word);
    out[i] = unscale(format::bits_float(rounded.bits));
    events[i] = event_bits(x, rounded);
  }
}

// round_step for formats with format::has_simple_grid(), through the faster formulations of
// nearest-even and stochastic rounding: the same results.
template <Rounding R, typename Unscale>
void round_step_simple(const Format& format, const float* in, float* out, std::size_t n, float scale,
                       Unscale unscale, const std::uint32_t* random, std::uint8_t* events) {
  const Format f = format;  // see round_step
  for (std::size_t i = 0; i < n; ++i) {
    const ScaledInput x = scale_input(in[i], scale);
    format::Rounded rounded;
    if constexpr (R == Rounding::stochastic) {
      rounded = format::round_stochastic_simple(f, x.bits, random[i]);
    } else {
      rounded = format::round_nearest_even_simple(f, x.bits);
    }
    out[i] = unscale(format::bits_float(rounded.bits));
    events[i] = event_bits(x, rounded);
  }
}

template <Rounding R, typename Unscale>
void round_any_step(const Format& f, const float* in, float* out, std::size_t n, float scale,
                    Unscale unscale, const std::uint32_t* random, std::uint8_t* events) {
  if constexpr (R == Rounding::nearest_even || R == Rounding::stochastic) {
    if (format::has_simple_grid(f)) return round_step_simple<R>(f, in, out, n, scale, unscale, random, events);
  }
  round_step<R>(f, in, out, n, scale, unscale, random, events);
}

// The two error sums of a step, in a loop simple enough to vectorize. The simd reduction fixes the
// summation order for a given build, whatever the thread count.
void add_error_sums(const float* in, const float* out, std::size_t n, QuantStats& s) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr float kMaxFloat = std::numeric_limits<float>::max();
  double sse = 0.0, ssi = 0.0;
#pragma omp simd reduction(+ : sse, ssi)
  for (std::size_t i = 0; i < n; ++i) {
    const double x = in[i];
    const double err = x - static_cast<double>(out[i]);
    const bool finite = std::fabs(in[i]) <= kMaxFloat;
    const bool out_finite = std::fabs(out[i]) <= kMaxFloat;
    sse += finite ? (out_finite ? err * err : kInf) : 0.0;
    ssi += finite ? x * x : 0.0;
  }
  s.sum_sq_error += sse;
  s.sum_sq_input += ssi;
}

// Statistics of a step from its inputs, outputs and events (all in L1 by now), in loops simple
// enough to vectorize: the counts and amax, then, with kSums, the error sums.
template <bool kSums>
void count_step(const float* in, const float* out, const std::uint8_t* events, std::size_t n, QuantStats& s) {
  std::uint32_t overflow = 0, underflow = 0, nans = 0, infs = 0, zeros = 0, amax_bits = 0;
#pragma omp simd reduction(+ : overflow, underflow, nans, infs, zeros) reduction(max : amax_bits)
  for (std::size_t i = 0; i < n; ++i) {
    // Magnitude bits order like the floats they encode, for non-NaN values.
    const std::uint32_t a = format::float_bits(in[i]) & ~format::kSignBit;
    const std::uint32_t event = events[i];
    overflow += event & 1u;
    underflow += event >> 1;
    nans += static_cast<std::uint32_t>(a > format::kFloatInfBits);
    infs += static_cast<std::uint32_t>(a == format::kFloatInfBits);
    zeros += static_cast<std::uint32_t>(a == 0);
    amax_bits = std::max(amax_bits, a > format::kFloatInfBits ? 0u : a);
  }
  if constexpr (kSums) add_error_sums(in, out, n, s);
  s.count += n;
  s.overflow += overflow;
  s.underflow += underflow;
  s.nan_inputs += nans;
  s.inf_inputs += infs;
  s.zero_inputs += zeros;
  s.amax = std::max(s.amax, format::bits_float(amax_bits));
}

template <Rounding R, bool kSums>
void quantize_kernel(const Format& f, const float* in, float* out, std::size_t n, float scale,
                     const std::uint32_t* random, QuantStats& s) {
  float buffer[kStep];
  std::uint8_t events[kStep];
  const bool in_place = in == out;
  for (std::size_t begin = 0; begin < n; begin += kStep) {
    const std::size_t len = std::min(kStep, n - begin);
    // In place, round into a buffer so that counting still sees the inputs.
    float* rounded = in_place ? buffer : out + begin;
    const std::uint32_t* words = random ? random + begin : nullptr;
    if (is_power_of_two_scale(scale)) {
      const float inverse = 1.0f / scale;
      round_any_step<R>(f, in + begin, rounded, len, scale, [inverse](float q) { return q * inverse; }, words, events);
    } else {
      round_any_step<R>(f, in + begin, rounded, len, scale, [scale](float q) { return q / scale; }, words, events);
    }
    count_step<kSums>(in + begin, rounded, events, len, s);
    if (in_place) std::copy_n(buffer, len, out + begin);
  }
}

// count_codes for formats with format::has_simple_code() under nearest-even or stochastic rounding:
// the simple grid's rounding and codes in a loop that vectorizes (the portable kernel's), then the
// counting; a non-finite result, which the simple codes do not cover, takes the general encoding.
template <Rounding R>
void count_simple_codes(const Format& format, const float* in, std::size_t n, float scale,
                        const std::uint32_t* random, std::uint64_t* histogram) {
  const Format f = format;  // see round_step
  std::uint32_t bits[kStep], codes[kStep];
  for (std::size_t begin = 0; begin < n; begin += kStep) {
    const std::size_t len = std::min(kStep, n - begin);
    for (std::size_t i = 0; i < len; ++i) {
      const std::uint32_t x = scale_input(in[begin + i], scale).bits;
      if constexpr (R == Rounding::stochastic) {
        bits[i] = format::round_stochastic_simple(f, x, random[begin + i]).bits;
      } else {
        bits[i] = format::round_nearest_even_simple(f, x).bits;
      }
      codes[i] = format::code_of_simple_grid_value(f, bits[i]);
    }
    for (std::size_t i = 0; i < len; ++i) {
      const bool finite = (bits[i] & ~format::kSignBit) < format::kFloatInfBits;
      ++histogram[finite ? codes[i] : format::code_of_grid_value(f, bits[i])];
    }
  }
}

// Codes are counted in a separate loop over the block just written (still in L1): re-rounding
// out·scale would not be exact for scales that are not powers of two, so the codes come from a
// second rounding of the same inputs, which is deterministic.
void count_codes(const Format& f, Rounding rounding, const float* in, std::size_t n, float scale,
                 const std::uint32_t* random, std::uint64_t* histogram) {
  if (format::has_simple_code(f)) {
    if (rounding == Rounding::nearest_even) {
      return count_simple_codes<Rounding::nearest_even>(f, in, n, scale, random, histogram);
    }
    if (rounding == Rounding::stochastic) {
      return count_simple_codes<Rounding::stochastic>(f, in, n, scale, random, histogram);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    format::RoundFlags flags;
    const std::uint32_t word = format::is_stochastic(rounding) ? random[i] : 0u;
    const std::uint32_t bits = format::round_bits(f, rounding, scale_input(in[i], scale).bits, word, flags);
    ++histogram[format::code_of_grid_value(f, bits)];
  }
}

}  // namespace

namespace {

// quantize_block_portable with or without the error sums.
template <bool kSums>
void portable_block(const Format& f, Rounding rounding, const float* in, float* out, std::size_t n, float scale,
                    const std::uint32_t* random, QuantStats& stats) {
  switch (rounding) {
    case Rounding::nearest_even: return quantize_kernel<Rounding::nearest_even, kSums>(f, in, out, n, scale, random, stats);
    case Rounding::nearest_away: return quantize_kernel<Rounding::nearest_away, kSums>(f, in, out, n, scale, random, stats);
    case Rounding::toward_zero: return quantize_kernel<Rounding::toward_zero, kSums>(f, in, out, n, scale, random, stats);
    case Rounding::toward_positive:
      return quantize_kernel<Rounding::toward_positive, kSums>(f, in, out, n, scale, random, stats);
    case Rounding::toward_negative:
      return quantize_kernel<Rounding::toward_negative, kSums>(f, in, out, n, scale, random, stats);
    case Rounding::odd: return quantize_kernel<Rounding::odd, kSums>(f, in, out, n, scale, random, stats);
    case Rounding::stochastic: return quantize_kernel<Rounding::stochastic, kSums>(f, in, out, n, scale, random, stats);
    case Rounding::stochastic_equal:
      return quantize_kernel<Rounding::stochastic_equal, kSums>(f, in, out, n, scale, random, stats);
  }
}

}  // namespace

void quantize_block_portable(const Format& f, Rounding rounding, const float* in, float* out, std::size_t n,
                             float scale, const std::uint32_t* random, QuantStats& stats, ErrorSums sums) {
  if (sums == ErrorSums::gather) return portable_block<true>(f, rounding, in, out, n, scale, random, stats);
  portable_block<false>(f, rounding, in, out, n, scale, random, stats);
}

void quantize_block(const Format& f, Rounding rounding, const float* in, float* out, std::size_t n,
                    float scale, const std::uint32_t* random, std::uint64_t* histogram,
                    QuantStats& stats, ErrorSums sums) {
  if (histogram) count_codes(f, rounding, in, n, scale, random, histogram);
  if (has_vector_kernel(f, rounding)) return quantize_block_vector(f, rounding, in, out, n, scale, random, stats, sums);
  quantize_block_portable(f, rounding, in, out, n, scale, random, stats, sums);
}

void quantize_scaled_blocks_portable(const Format& f, Rounding rounding, const float* in, float* out, std::size_t n,
                                     std::size_t block, const int* exponents, const std::uint32_t* random,
                                     std::uint64_t* overflows, QuantStats& stats, ErrorSums sums) {
  for (std::size_t begin = 0, b = 0; begin < n; begin += block, ++b) {
    QuantStats s;
    quantize_block_portable(f, rounding, in + begin, out + begin, std::min(block, n - begin),
                            format::exp2_exact(-exponents[b]), random ? random + begin : nullptr, s, sums);
    overflows[b] = s.overflow;
    stats.merge(s);
  }
}

void quantize_scaled_blocks(const Format& f, Rounding rounding, const float* in, float* out, std::size_t n,
                            std::size_t block, const int* exponents, const std::uint32_t* random,
                            std::uint64_t* overflows, QuantStats& stats, std::size_t segment, ErrorSums sums) {
  if (has_vector_kernel(f, rounding)) {
    return quantize_scaled_blocks_vector(f, rounding, in, out, n, block, exponents, random, overflows, stats,
                                         segment == 0 ? n : segment, sums);
  }
  quantize_scaled_blocks_portable(f, rounding, in, out, n, block, exponents, random, overflows, stats, sums);
}

QuantStats quantize(const Format& f, std::span<const float> in, std::span<float> out,
                    const QuantizeOptions& options) {
  if (in.size() != out.size()) {
    throw std::invalid_argument("quantize: input has " + std::to_string(in.size()) +
                                " elements but output has " + std::to_string(out.size()));
  }
  std::uint64_t* histogram = nullptr;
  if (!options.code_histogram.empty()) {
    if (f.width > 8 || options.code_histogram.size() != f.code_count()) {
      throw std::invalid_argument("quantize: a code histogram needs an 8-bit-or-narrower format and " +
                                  std::to_string(f.code_count()) + " bins, got " +
                                  std::to_string(options.code_histogram.size()) + " bins for a " +
                                  std::to_string(f.width) + "-bit format");
    }
    histogram = options.code_histogram.data();
  }
  const bool stochastic = format::is_stochastic(options.rounding);
  const auto quantize_chunk = [&](std::size_t chunk_begin, std::size_t chunk_end) {
    QuantStats stats;
    std::uint32_t words[kTile];
    std::uint64_t local_histogram[256] = {};
    for (std::size_t begin = chunk_begin; begin < chunk_end; begin += kTile) {
      const std::size_t len = std::min(kTile, chunk_end - begin);
      if (stochastic) fill_random(options.seed, options.stream, options.first_index + begin, {words, len}, options.random_bits);
      quantize_block(f, options.rounding, in.data() + begin, out.data() + begin, len, options.scale,
                     words, histogram ? local_histogram : nullptr, stats, options.error_sums);
    }
    if (histogram) {
      for (std::size_t code = 0; code < options.code_histogram.size(); ++code) {
        if (local_histogram[code] == 0) continue;
#pragma omp atomic
        histogram[code] += local_histogram[code];
      }
    }
    return stats;
  };
  return reduce_in_chunks<kQuantizeChunking, QuantStats>(in.size(), quantize_chunk,
                                                         [](QuantStats& total, const QuantStats& part) { total.merge(part); });
}

}  // namespace altgrad::quant
