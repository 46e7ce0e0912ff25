#include "quant/vector_kernel.hpp"

#include "format/codec.hpp"
#include "quant/quantize.hpp"
#include "quant/scaled_input.hpp"
#include "quant/vector_kernel_lanes.hpp"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace altgrad::quant {
namespace {

using format::Format;
using format::Rounding;
using vector_lanes::lane_of;
using vector_lanes::lanes_before;
using vector_lanes::outputs_stay_finite;

constexpr std::size_t kLanes = 16;
constexpr __mmask16 kAllLanes = 0xFFFF;

__m512i splat(std::uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }

// The grid of a simple-grid format as broadcast constants; see format::round_nearest_even_simple()
// and format::round_stochastic_simple(), whose results these kernels reproduce lane by lane.
struct Grid {
  __m512i max_finite, min_normal;
  // The largest |x·s| (float32 bits) the kernel rounds itself: every finite one where overflow
  // saturates, max finite where it gives Inf or NaN (those go to the portable kernel); and below
  // 2^(105 + M) in any case, where nearest-even's shift constant stays a float32.
  __m512i own_limit;
  __m512i plain_limit;      // the smaller of max finite and own_limit: below it, no check is needed
  __m512i keep_mask, step;  // the float32 bits a normal value keeps; one step of them
  __m128i remainder_shift;  // 32 − the bits it drops: moves the dropped bits to the top of a word
  __m512i shift_offset;     // (23 − M) in the exponent field: 2^e becomes 2^(e − M + 23)
  // M = 0 (a grid of powers of two): ties go up when the lowest exponent bit (`step`), flipped
  // where the code's parity differs from that bit's (an even bias), is set.
  __m512i half_step_less_one;
  __mmask16 parity_flip;
  // Below min normal the step is fixed: adding C = 2^(emin − M + 23) makes float32's own rounding
  // land on it. scalef(r, to_fraction) is a remainder r in units of 2^−32 steps (scalef, since
  // 2^to_fraction need not be a float32).
  __m512 subnormal_shift, subnormal_step, to_fraction;

  explicit Grid(const Format& f) {
    const int M = f.spec.mantissa_bits;
    const int dropped = format::kFloatMantissaBits - M;
    const std::uint32_t dropped_mask = (1u << dropped) - 1u;
    max_finite = splat(f.max_finite_bits);
    const bool saturates = f.spec.overflow == format::Overflow::saturate || !f.has_nan;
    const std::uint32_t shift_limit = format::float_bits(format::exp2_exact(105 + M)) - 1u;
    const std::uint32_t limit = std::min(saturates ? 0x7F7F'FFFFu : f.max_finite_bits, shift_limit);
    own_limit = splat(limit);
    plain_limit = splat(std::min(limit, f.max_finite_bits));
    min_normal = splat(f.min_normal_bits);
    keep_mask = splat(~dropped_mask);
    step = splat(1u << dropped);
    remainder_shift = _mm_cvtsi32_si128(32 - dropped);
    shift_offset = splat(static_cast<std::uint32_t>(dropped) << format::kFloatMantissaBits);
    half_step_less_one = splat(dropped_mask >> 1);
    parity_flip = (M == 0 && (f.spec.bias + 1) % 2 != 0) ? kAllLanes : 0;
    subnormal_shift = _mm512_set1_ps(format::exp2_exact(f.min_normal_exp - M + format::kFloatMantissaBits));
    subnormal_step = _mm512_set1_ps(format::exp2_exact(f.min_normal_exp - M));
    to_fraction = _mm512_set1_ps(static_cast<float>(M - f.min_normal_exp + 32));
  }
};

// |x| (finite float32 bits a within own_limit) rounded to nearest-even on the grid extended upward,
// for M ≥ 1: adding C = 2^(max(e, emin) − M + 23), e the exponent of |x|, makes float32's rounding
// land on the grid step there (ties to an even significand: the even code), and taking C away
// again is exact.
__m512i round_nearest_even(const Grid& g, __m512i a) {
  const __m512i exponent = _mm512_max_epu32(_mm512_and_si512(a, splat(format::kFloatInfBits)), g.min_normal);
  const __m512 shift = _mm512_castsi512_ps(_mm512_add_epi32(exponent, g.shift_offset));
  const __m512 sum = _mm512_add_round_ps(_mm512_castsi512_ps(a), shift, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_castps_si512(_mm512_sub_ps(sum, shift));
}

// The same for M = 0, whose ties go to the even exponent field, which float32's rounding does not
// know: on the bit pattern, as format::round_nearest_even_simple() does.
__m512i round_nearest_even_powers_of_two(const Grid& g, __m512i a) {
  const __mmask16 lsb = _mm512_test_epi32_mask(a, g.step) ^ g.parity_flip;
  const __m512i biased = _mm512_add_epi32(a, g.half_step_less_one);
  const __m512i normal = _mm512_and_si512(_mm512_mask_add_epi32(biased, lsb, biased, _mm512_set1_epi32(1)), g.keep_mask);
  const __m512 shifted = _mm512_add_ps(_mm512_castsi512_ps(a), g.subnormal_shift);
  const __mmask16 subnormal = _mm512_cmplt_epu32_mask(a, g.min_normal);
  return _mm512_castps_si512(_mm512_mask_sub_ps(_mm512_castsi512_ps(normal), subnormal, shifted, g.subnormal_shift));
}

// |x| (finite float32 bits a) rounded stochastically on the grid extended upward with the uniform
// words `random`: up when the word is below the dropped part taken to 32 bits.
__m512i round_stochastic(const Grid& g, __m512i a, __m512i random) {
  // Normal: one step added to a where the word says up; the dropped bits are masked off below.
  const __m512i dropped_bits = _mm512_sll_epi32(a, g.remainder_shift);
  const __m512i stepped = _mm512_mask_add_epi32(a, _mm512_cmplt_epu32_mask(random, dropped_bits), a, g.step);

  // Below min normal: truncate to the fixed step with one addition rounded toward zero; the
  // remainder is exact, and so is its scaling to 2^−32 steps.
  const __m512 magnitude = _mm512_castsi512_ps(a);
  const __m512 truncated_sum = _mm512_add_round_ps(magnitude, g.subnormal_shift, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m512 below = _mm512_sub_ps(truncated_sum, g.subnormal_shift);
  const __m512i remainder_bits =
      _mm512_cvttps_epu32(_mm512_scalef_ps(_mm512_sub_ps(magnitude, below), g.to_fraction));
  const __mmask16 up = _mm512_cmplt_epu32_mask(random, remainder_bits);
  const __m512 subnormal = _mm512_mask_add_ps(below, up, below, g.subnormal_step);
  // (a + step) & keep = (a & keep) + step: one masked AND both truncates the normal lanes and
  // merges them with the subnormal ones.
  const __mmask16 normal = _mm512_cmpge_epu32_mask(a, g.min_normal);
  return _mm512_mask_and_epi32(_mm512_castps_si512(subnormal), normal, stepped, g.keep_mask);
}

// The sum of 16 lanes (two registers of 8) as a butterfly: lane k with lane k + 8, then with k + 4,
// k + 2, k + 1. Each level pairs the same lanes whatever cyclic shift the lanes had, and addition
// commutes, so the sum does not depend on which lane element 0 of a call sat in.
double sum_lanes(const __m512d (&halves)[2]) {
  const __m512d eight = _mm512_add_pd(halves[0], halves[1]);
  const __m256d four = _mm256_add_pd(_mm512_castpd512_pd256(eight), _mm512_extractf64x4_pd(eight, 1));
  const __m128d two = _mm_add_pd(_mm256_castpd256_pd128(four), _mm256_extractf128_pd(four, 1));
  return _mm_cvtsd_f64(_mm_add_sd(two, _mm_unpackhi_pd(two, two)));
}

// Statistics in registers until the end of the call: everything for the vectors the kernel
// finished itself, and the sums of those it handed over too (add_handed_over()). Without kSums
// (ErrorSums::skip) the two error sums are neither kept nor added.
template <bool kSums>
struct Accumulators {
  __m512 amax = _mm512_setzero_ps();
  __m512d sum_sq_error[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()};
  __m512d sum_sq_input[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()};
  std::uint64_t count = 0;
  std::uint64_t overflow = 0;
  std::uint64_t underflow = 0;
  std::uint64_t zeros = 0;
  __mmask16 overflow_lanes = 0;  // the lanes that overflowed at least once

  // x (loaded again from `in`, so that the conversions to double read memory) and the dequantized
  // y of one vector whose lanes are all finite; lanes beyond the array are 0.
  void add(const float* in, __m512 x, __m512 y, __m512i on_grid, __mmask16 valid, __mmask16 overflowed) {
    count += static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(valid)));
    overflow += static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(overflowed)));
    overflow_lanes |= overflowed;
    constexpr int kMaxMagnitude = 0x0B;  // vrangeps: the larger magnitude, sign cleared
    amax = _mm512_range_ps(amax, x, kMaxMagnitude);
    const __mmask16 nonzero = _mm512_test_epi32_mask(_mm512_castps_si512(x), splat(~format::kSignBit));
    underflow += static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(
        _mm512_mask_testn_epi32_mask(nonzero, on_grid, on_grid))));
    zeros += static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(valid & ~nonzero)));
    if constexpr (!kSums) return;
    const auto low = static_cast<__mmask8>(valid), high = static_cast<__mmask8>(valid >> 8);
    add_squares(_mm256_maskz_loadu_ps(low, in), _mm512_castps512_ps256(y), 0);
    add_squares(_mm256_maskz_loadu_ps(high, in + 8), _mm512_extractf32x8_ps(y, 1), 1);
  }

  // In double, as the portable kernel sums; the fused multiply-add rounds once (x² is exact anyway).
  void add_squares(__m256 x, __m256 y, int half) {
    const __m512d xd = _mm512_cvtps_pd(x);
    const __m512d error = _mm512_sub_pd(xd, _mm512_cvtps_pd(y));
    sum_sq_error[half] = _mm512_fmadd_pd(error, error, sum_sq_error[half]);
    sum_sq_input[half] = _mm512_fmadd_pd(xd, xd, sum_sq_input[half]);
  }

  // The sums of a vector the portable kernel quantized, as that kernel defines them (nothing for a
  // non-finite input, Inf for a non-finite output), in the lanes and with the operations of
  // add_squares(): whether a vector is handed over depends on where the array starts, the sums
  // must not.
  void add_handed_over(__m512 x, __m512 y) {
    if constexpr (!kSums) return;
    const __m512 max_finite = _mm512_set1_ps(std::numeric_limits<float>::max());
    const __mmask16 x_finite = _mm512_cmp_ps_mask(_mm512_abs_ps(x), max_finite, _CMP_LE_OQ);
    const __mmask16 both_finite = x_finite & _mm512_cmp_ps_mask(_mm512_abs_ps(y), max_finite, _CMP_LE_OQ);
    const __m512d inf = _mm512_set1_pd(std::numeric_limits<double>::infinity());
    for (int half = 0; half < 2; ++half) {
      const auto lanes = [half](unsigned mask) { return static_cast<__mmask8>(mask >> (8 * half)); };
      const __m512d xd = _mm512_cvtps_pd(half ? _mm512_extractf32x8_ps(x, 1) : _mm512_castps512_ps256(x));
      const __m512d yd = _mm512_cvtps_pd(half ? _mm512_extractf32x8_ps(y, 1) : _mm512_castps512_ps256(y));
      const __m512d error = _mm512_sub_pd(xd, yd);
      sum_sq_error[half] = _mm512_mask3_fmadd_pd(error, error, sum_sq_error[half], lanes(both_finite));
      const __mmask8 output_not_finite = lanes(x_finite & ~both_finite);
      sum_sq_error[half] = _mm512_mask_add_pd(sum_sq_error[half], output_not_finite, sum_sq_error[half], inf);
      sum_sq_input[half] = _mm512_mask3_fmadd_pd(xd, xd, sum_sq_input[half], lanes(x_finite));
    }
  }

  QuantStats totals() const {
    QuantStats s;
    s.count = count;
    s.overflow = overflow;
    s.underflow = underflow;
    s.zero_inputs = zeros;
    s.amax = _mm512_reduce_max_ps(amax);
    if constexpr (kSums) {
      s.sum_sq_error = sum_lanes(sum_sq_error);
      s.sum_sq_input = sum_lanes(sum_sq_input);
    }
    return s;
  }
};

// The vector kernel for one format, rounding and sign rule; scales come per call, with the value
// that takes a rounded value back: the scale's reciprocal to multiply by where that is exact (a
// power of two, as in the portable kernel), else the scale to divide by.
template <Rounding R, bool kNegativeZero, bool kPowersOfTwo>
struct Kernel {
  Grid grid;

  // Quantizes the lanes of `valid` (a prefix) at in/out; returns false, having stored nothing, when
  // a lane needs the portable kernel.
  template <bool kExactInverse, bool kSums>
  [[gnu::always_inline]] bool quantize_vector(const float* in, float* out, const std::uint32_t* random,
                                              __mmask16 valid, __m512 scale, __m512 back,
                                              Accumulators<kSums>& acc) const {
    const __m512i magnitude_mask = splat(~format::kSignBit);
    const __m512 x = _mm512_maskz_loadu_ps(valid, in);
    const __m512i product = _mm512_castps_si512(_mm512_mul_ps(x, scale));
    const __m512i a = _mm512_and_si512(product, magnitude_mask);
    // Beyond plain_limit is rare: only then check own_limit, and saturate and count after rounding
    // (below max finite, which is on the grid, no value rounds past it).
    const __mmask16 beyond = _mm512_cmpgt_epu32_mask(a, grid.plain_limit);
    if (beyond && _mm512_cmpgt_epu32_mask(a, grid.own_limit)) return false;
    __m512i on_grid;
    if constexpr (R == Rounding::stochastic) {
      on_grid = round_stochastic(grid, a, _mm512_maskz_loadu_epi32(valid, random));
    } else if constexpr (kPowersOfTwo) {
      on_grid = round_nearest_even_powers_of_two(grid, a);
    } else {
      on_grid = round_nearest_even(grid, a);
    }
    __mmask16 overflowed = 0;
    if (beyond) {
      overflowed = _mm512_cmpgt_epu32_mask(on_grid, grid.max_finite);
      on_grid = _mm512_min_epu32(on_grid, grid.max_finite);
    }
    constexpr int kOrSign = 0xF8;  // ternary-logic truth table of a | (b & c): the product's sign onto the grid value
    const __m512i sign_mask = splat(format::kSignBit);
    __m512i signed_bits;
    if constexpr (kNegativeZero) {
      signed_bits = _mm512_ternarylogic_epi32(on_grid, product, sign_mask, kOrSign);
    } else {
      signed_bits = _mm512_mask_ternarylogic_epi32(on_grid, _mm512_test_epi32_mask(on_grid, on_grid), product,
                                                   sign_mask, kOrSign);
    }
    const __m512 q = _mm512_castsi512_ps(signed_bits);
    const __m512 y = kExactInverse ? _mm512_mul_ps(q, back) : _mm512_div_ps(q, back);
    acc.add(in, x, y, on_grid, valid, overflowed);  // before the store: `in` may be `out`
    _mm512_mask_storeu_ps(out, valid, y);
    return true;
  }

  // n elements at one scale for which has_vector_kernel() holds, element 0 in lane `first_lane` of
  // its vector; statistics into acc and, for the vectors handed over, into handed_over.
  template <bool kSums>
  void run(const Format& f, const float* in, float* out, std::size_t n, float scale_value,
           const std::uint32_t* random, std::size_t first_lane, Accumulators<kSums>& acc,
           QuantStats& handed_over) const {
    if (is_power_of_two_scale(scale_value)) {
      run<true>(f, in, out, n, scale_value, 1.0f / scale_value, random, first_lane, acc, handed_over);
    } else {
      run<false>(f, in, out, n, scale_value, scale_value, random, first_lane, acc, handed_over);
    }
  }

  template <bool kExactInverse, bool kSums>
  [[gnu::always_inline]] void run(const Format& f, const float* in, float* out, std::size_t n, float scale_value,
                                  float back_value, const std::uint32_t* random, std::size_t first_lane,
                                  Accumulators<kSums>& acc, QuantStats& handed_over) const {
    const __m512 scale = _mm512_set1_ps(scale_value), back = _mm512_set1_ps(back_value);
    // A copy that nothing outside this function can reach, so that the sums stay in registers
    // through the loop rather than going through memory for every vector.
    Accumulators<kSums> sums = acc;
    // Elements [e, e + count) in lanes [lane, lane + count) of one vector.
    const auto step = [&](std::size_t e, std::size_t lane, std::size_t count) __attribute__((always_inline)) {
      const auto valid = static_cast<__mmask16>(((1u << count) - 1u) << lane);
      const std::uint32_t* words = random ? random + e : nullptr;
      const float* in_vector = lanes_before(in + e, lane);
      float* out_vector = lanes_before(out + e, lane);
      if (quantize_vector<kExactInverse>(in_vector, out_vector, words ? lanes_before(words, lane) : nullptr, valid,
                                         scale, back, sums)) [[likely]] {
        return;
      }
      const __m512 x = _mm512_maskz_loadu_ps(valid, in_vector);  // before the portable kernel: `in` may be `out`
      hand_over(f, in + e, out + e, count, scale_value, words, handed_over);
      sums.add_handed_over(x, _mm512_maskz_loadu_ps(valid, out_vector));
    };
    std::size_t e = 0;
    if (first_lane != 0) {
      e = std::min(kLanes - first_lane, n);
      step(0, first_lane, e);
    }
    for (; e + kLanes <= n; e += kLanes) step(e, 0, kLanes);
    if (e < n) step(e, 0, n - e);
    acc = sums;
  }

  // The portable kernel's work on a vector this one does not cover, with its counts and without its
  // sums, which are added in this kernel's lanes instead (Accumulators::add_handed_over). Rare, so
  // kept out of line.
  [[gnu::noinline]] static void hand_over(const Format& f, const float* in, float* out, std::size_t count, float scale,
                                          const std::uint32_t* words, QuantStats& handed_over) {
    quantize_block_portable(f, R, in, out, count, scale, words, handed_over, ErrorSums::skip);
  }
};

// quantize_block_vector and quantize_scaled_blocks_vector for one rounding and sign rule; each entry
// point with the error sums (kSums) and without.
template <Rounding R, bool kNegativeZero, bool kPowersOfTwo>
struct Quantizer {
  // ErrorSums as the template argument of the instance that gathers (or skips) them.
  static constexpr ErrorSums sums_of(bool gather) { return gather ? ErrorSums::gather : ErrorSums::skip; }

  template <bool kSums>
  static void block(const Format& f, const float* in, float* out, std::size_t n, float scale,
                    const std::uint32_t* random, QuantStats& stats) {
    if (!outputs_stay_finite(f, scale)) {
      return quantize_block_portable(f, R, in, out, n, scale, random, stats, sums_of(kSums));
    }
    const Kernel<R, kNegativeZero, kPowersOfTwo> kernel{Grid(f)};
    Accumulators<kSums> acc;
    QuantStats handed_over;  // counts of the vectors the portable kernel quantized (their sums are in acc)
    kernel.run(f, in, out, n, scale, random, lane_of(in), acc, handed_over);
    stats.merge(acc.totals());
    stats.merge(handed_over);
  }

  // One grid for all the blocks and one set of register statistics per segment; a block's
  // overflows are what the counters gained during it.
  template <bool kSums>
  static void scaled_blocks(const Format& f, const float* in, float* out, std::size_t n, std::size_t block,
                            const int* exponents, const std::uint32_t* random, std::uint64_t* overflows,
                            QuantStats& stats, std::size_t segment) {
    const Kernel<R, kNegativeZero, kPowersOfTwo> kernel{Grid(f)};
    Accumulators<kSums> acc;
    QuantStats handed_over;
    for (std::size_t begin = 0, b = 0; begin < n; begin += block, ++b) {
      const std::size_t len = std::min(block, n - begin);
      const std::uint32_t* words = random ? random + begin : nullptr;
      const float scale = format::exp2_exact(-exponents[b]);
      const std::uint64_t before = acc.overflow + handed_over.overflow;
      if (outputs_stay_finite(f, scale)) {
        // 2^k itself is the exact reciprocal, including where is_power_of_two_scale() is too strict.
        kernel.template run<true>(f, in + begin, out + begin, len, scale, format::exp2_exact(exponents[b]), words, 0,
                                  acc, handed_over);
      } else {
        quantize_block_portable(f, R, in + begin, out + begin, len, scale, words, handed_over, sums_of(kSums));
      }
      overflows[b] = acc.overflow + handed_over.overflow - before;
      if ((begin + len) % segment == 0 || begin + len == n) {
        stats.merge(acc.totals());
        stats.merge(handed_over);
        acc = Accumulators<kSums>{};
        handed_over = QuantStats{};
      }
    }
  }

  // quantize_column_blocks_vector(): every scale is checked before anything is stored, so the
  // kernel never hands a vector over halfway through the tile.
  template <bool kSums>
  static bool column_blocks(const Format& f, const float* in, float* out, std::size_t stride, std::size_t rows,
                            std::size_t width, const float* finite_amax, bool all_finite, const int* exponents,
                            const std::uint32_t* random, std::uint32_t& clipped_columns, QuantStats& stats) {
    if (!all_finite) return false;
    const Kernel<R, kNegativeZero, kPowersOfTwo> kernel{Grid(f)};
    alignas(64) float scales[kLanes], backs[kLanes], amax[kLanes];
    for (std::size_t j = 0; j < kLanes; ++j) {
      scales[j] = j < width ? format::exp2_exact(-exponents[j]) : 1.0f;
      backs[j] = j < width ? format::exp2_exact(exponents[j]) : 1.0f;
      amax[j] = j < width ? finite_amax[j] : 0.0f;
      if (!outputs_stay_finite(f, scales[j])) return false;
    }
    const __m512 scale = _mm512_load_ps(scales), back = _mm512_load_ps(backs);
    // x·s is monotone in |x|, so a column's largest product is its amax times its scale.
    const __m512i largest = _mm512_and_si512(_mm512_castps_si512(_mm512_mul_ps(_mm512_load_ps(amax), scale)),
                                             splat(~format::kSignBit));
    if (_mm512_cmpgt_epu32_mask(largest, kernel.grid.own_limit)) return false;
    const auto valid = static_cast<__mmask16>((1u << width) - 1u);
    Accumulators<kSums> acc;
    for (std::size_t r = 0; r < rows; ++r) {
      kernel.template quantize_vector<true>(in + r * stride, out + r * stride, random ? random + kLanes * r : nullptr,
                                            valid, scale, back, acc);
    }
    clipped_columns = acc.overflow_lanes;
    stats.merge(acc.totals());
    return true;
  }
};

}  // namespace

bool has_vector_kernel(const Format& f, Rounding rounding) {
  return (rounding == Rounding::nearest_even || rounding == Rounding::stochastic) && format::has_simple_grid(f);
}

void quantize_block_vector(const Format& f, Rounding rounding, const float* in, float* out, std::size_t n,
                           float scale, const std::uint32_t* random, QuantStats& stats, ErrorSums sums) {
  vector_lanes::with_quantizer<Quantizer>(f, rounding, [&](auto quantizer) {
    if (sums == ErrorSums::gather) return quantizer.template block<true>(f, in, out, n, scale, random, stats);
    quantizer.template block<false>(f, in, out, n, scale, random, stats);
  });
}

void quantize_scaled_blocks_vector(const Format& f, Rounding rounding, const float* in, float* out, std::size_t n,
                                   std::size_t block, const int* exponents, const std::uint32_t* random,
                                   std::uint64_t* overflows, QuantStats& stats, std::size_t segment, ErrorSums sums) {
  vector_lanes::with_quantizer<Quantizer>(f, rounding, [&](auto quantizer) {
    if (sums == ErrorSums::gather) {
      return quantizer.template scaled_blocks<true>(f, in, out, n, block, exponents, random, overflows, stats, segment);
    }
    quantizer.template scaled_blocks<false>(f, in, out, n, block, exponents, random, overflows, stats, segment);
  });
}

bool quantize_column_blocks_vector(const Format& f, Rounding rounding, const float* in, float* out, std::size_t stride,
                                   std::size_t rows, std::size_t width, const float* finite_amax, bool all_finite,
                                   const int* exponents, const std::uint32_t* random, std::uint32_t& clipped_columns,
                                   QuantStats& stats, ErrorSums sums) {
  if (!has_vector_kernel(f, rounding)) return false;
  bool done = false;
  vector_lanes::with_quantizer<Quantizer>(f, rounding, [&](auto quantizer) {
    done = sums == ErrorSums::gather
               ? quantizer.template column_blocks<true>(f, in, out, stride, rows, width, finite_amax, all_finite,
                                                        exponents, random, clipped_columns, stats)
               : quantizer.template column_blocks<false>(f, in, out, stride, rows, width, finite_amax, all_finite,
                                                         exponents, random, clipped_columns, stats);
  });
  return done;
}

}  // namespace altgrad::quant

#elif !defined(__AVX2__) || !defined(__FMA__)  // the portable kernel does everything (AVX2: vector_kernel_avx2.cpp)

namespace altgrad::quant {

bool has_vector_kernel(const format::Format&, format::Rounding) { return false; }

void quantize_block_vector(const format::Format& f, format::Rounding rounding, const float* in, float* out,
                           std::size_t n, float scale, const std::uint32_t* random, QuantStats& stats, ErrorSums sums) {
  quantize_block_portable(f, rounding, in, out, n, scale, random, stats, sums);
}

void quantize_scaled_blocks_vector(const format::Format& f, format::Rounding rounding, const float* in, float* out,
                                   std::size_t n, std::size_t block, const int* exponents,
                                   const std::uint32_t* random, std::uint64_t* overflows, QuantStats& stats,
                                   std::size_t, ErrorSums sums) {
  quantize_scaled_blocks_portable(f, rounding, in, out, n, block, exponents, random, overflows, stats, sums);
}

bool quantize_column_blocks_vector(const format::Format&, format::Rounding, const float*, float*, std::size_t,
                                   std::size_t, std::size_t, const float*, bool, const int*, const std::uint32_t*,
                                   std::uint32_t&, QuantStats&, ErrorSums) {
  return false;
}

}  // namespace altgrad::quant

#endif
