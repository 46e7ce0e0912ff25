#include "quant/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "format/codec.hpp"
#include "format/philox.hpp"

namespace altgrad::quant {
namespace {

using format::Format;
using format::Rounding;

constexpr std::size_t kTile = 1024;           // elements per random-word buffer (stack)
constexpr std::size_t kMinChunk = 16 * kTile; // smallest unit of parallel work
constexpr std::size_t kMaxChunks = 256;       // bounds the partial-statistics array on the stack

// Depends only on n, never on the thread count: that is what makes the sums reproducible.
std::size_t chunk_size(std::size_t n) {
  const std::size_t even_split = (n + kMaxChunks - 1) / kMaxChunks;
  const std::size_t c = std::max(kMinChunk, even_split);
  return (c + kTile - 1) / kTile * kTile;
}

template <Rounding R>
void quantize_kernel(const Format& f, const float* in, float* out, std::size_t n, float scale,
                     const std::uint32_t* random, QuantStats& s) {
  std::uint64_t overflow = 0, underflow = 0, nans = 0, infs = 0;
  float amax = 0.0f;
  double sse = 0.0, ssi = 0.0;
#pragma omp simd reduction(+ : overflow, underflow, nans, infs, sse, ssi) reduction(max : amax)
  for (std::size_t i = 0; i < n; ++i) {
    const float x = in[i];
    std::uint32_t word = 0;
    if constexpr (format::is_stochastic(R)) word = random[i];
    format::RoundFlags flags;
    const float q = format::bits_float(format::round_bits<R>(f, format::float_bits(x * scale), word, flags));
    const float y = q / scale;
    out[i] = y;
    const float ax = std::fabs(x);
    const bool finite = ax <= std::numeric_limits<float>::max();
    overflow += flags.overflow;
    underflow += flags.underflow;
    nans += x != x;
    infs += ax == std::numeric_limits<float>::infinity();
    amax = ax > amax ? ax : amax;
    const double err = static_cast<double>(x) - static_cast<double>(y);
    const bool y_finite = std::fabs(y) <= std::numeric_limits<float>::max();
    sse += finite ? (y_finite ? err * err : std::numeric_limits<double>::infinity()) : 0.0;
    ssi += finite ? static_cast<double>(x) * static_cast<double>(x) : 0.0;
  }
  s.count += n;
  s.overflow += overflow;
  s.underflow += underflow;
  s.nan_inputs += nans;
  s.inf_inputs += infs;
  s.amax = std::max(s.amax, amax);
  s.sum_sq_error += sse;
  s.sum_sq_input += ssi;
}

// Codes are counted in a separate loop over the block just written (still in L1): re-rounding
// out·scale would not be exact for scales that are not powers of two, so the codes come from a
// second rounding of the same inputs, which is deterministic.
void count_codes(const Format& f, Rounding rounding, const float* in, std::size_t n, float scale,
                 const std::uint32_t* random, std::uint64_t* histogram) {
  for (std::size_t i = 0; i < n; ++i) {
    format::RoundFlags flags;
    const std::uint32_t word = format::is_stochastic(rounding) ? random[i] : 0u;
    const std::uint32_t bits = format::round_bits(f, rounding, format::float_bits(in[i] * scale), word, flags);
    ++histogram[format::code_of_grid_value(f, bits)];
  }
}

}  // namespace

void fill_random(std::uint64_t seed, std::uint64_t stream, std::uint64_t first_index,
                 std::span<std::uint32_t> words) {
  const std::uint64_t first_group = first_index >> 2;
  const std::size_t skip = first_index & 3;
  const std::size_t groups = (words.size() + skip + 3) / 4;
  for (std::size_t g = 0; g < groups; ++g) {
    const auto block = format::philox_block(seed, stream, first_group + g);
    for (std::size_t j = 0; j < 4; ++j) {
      const std::size_t i = g * 4 + j;
      if (i >= skip && i - skip < words.size()) words[i - skip] = block[j];
    }
  }
}

void quantize_block(const Format& f, Rounding rounding, const float* in, float* out, std::size_t n,
                    float scale, const std::uint32_t* random, std::uint64_t* histogram,
                    QuantStats& stats) {
  if (histogram) count_codes(f, rounding, in, n, scale, random, histogram);
  switch (rounding) {
    case Rounding::nearest_even: return quantize_kernel<Rounding::nearest_even>(f, in, out, n, scale, random, stats);
    case Rounding::nearest_away: return quantize_kernel<Rounding::nearest_away>(f, in, out, n, scale, random, stats);
    case Rounding::toward_zero: return quantize_kernel<Rounding::toward_zero>(f, in, out, n, scale, random, stats);
    case Rounding::toward_positive: return quantize_kernel<Rounding::toward_positive>(f, in, out, n, scale, random, stats);
    case Rounding::toward_negative: return quantize_kernel<Rounding::toward_negative>(f, in, out, n, scale, random, stats);
    case Rounding::odd: return quantize_kernel<Rounding::odd>(f, in, out, n, scale, random, stats);
    case Rounding::stochastic: return quantize_kernel<Rounding::stochastic>(f, in, out, n, scale, random, stats);
    case Rounding::stochastic_equal: return quantize_kernel<Rounding::stochastic_equal>(f, in, out, n, scale, random, stats);
  }
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
  const std::size_t n = in.size();
  const std::size_t chunk = chunk_size(n);
  const std::size_t chunks = (n + chunk - 1) / chunk;
  QuantStats partial[kMaxChunks];
  const bool stochastic = format::is_stochastic(options.rounding);

#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::size_t c = 0; c < chunks; ++c) {
    std::uint32_t words[kTile];
    std::uint64_t local_histogram[256] = {};
    const std::size_t end = std::min(n, (c + 1) * chunk);
    for (std::size_t begin = c * chunk; begin < end; begin += kTile) {
      const std::size_t len = std::min(kTile, end - begin);
      if (stochastic) fill_random(options.seed, options.stream, options.first_index + begin, {words, len});
      quantize_block(f, options.rounding, in.data() + begin, out.data() + begin, len, options.scale,
                     words, histogram ? local_histogram : nullptr, partial[c]);
    }
    if (histogram) {
      for (std::size_t code = 0; code < options.code_histogram.size(); ++code) {
        if (local_histogram[code] == 0) continue;
#pragma omp atomic
        histogram[code] += local_histogram[code];
      }
    }
  }

  QuantStats total;
  for (std::size_t c = 0; c < chunks; ++c) total.merge(partial[c]);
  return total;
}

}  // namespace altgrad::quant
