// The quantizer's vector kernel (quant/vector_kernel.hpp) for AVX2 without AVX-512: nearest-even
// and stochastic rounding on every simple grid, grids of powers of two (E7M0) included, as the
// AVX-512 kernel of quant/vector_kernel.cpp covers them. It follows that kernel's arithmetic,
// sixteen elements as two 8-float halves taken in separate passes (Kernel); where AVX2 lacks an
// instruction that kernel uses (stochastic rounding below min normal takes a rounding mode and an
// unsigned conversion there), it takes format::round_stochastic_simple()'s formulas, which give the
// same bits. It keeps its statistics in the same sixteen lanes, each summed in the same order, so
// that both kernels give the same bits and the same sums.
#include "quant/vector_kernel.hpp"

#if !defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "format/codec.hpp"
#include "quant/quantize.hpp"
#include "quant/scaled_input.hpp"
#include "quant/vector_kernel_lanes.hpp"

namespace altgrad::quant {
namespace {

using format::Format;
using format::Rounding;
constexpr Rounding kNearest = Rounding::nearest_even;
constexpr Rounding kStochastic = Rounding::stochastic;
using vector_lanes::lane_of;
using vector_lanes::largest_finite_exponent;
using vector_lanes::lanes_before;
using vector_lanes::outputs_stay_finite;

constexpr std::size_t kLanes = 16;

__m256i splat(std::uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }

// Lanes 8h..8h + 7 of a 16-bit lane mask as AVX2's lane masks (all ones where set); and back.
__m256i half_mask(unsigned lanes, int h) {
  const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(lanes >> (8 * h))), bit), bit);
}
unsigned bits_of(__m256i mask, int h) {
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(mask))) << (8 * h);
}

// Masked loads and stores touch no masked-off lane; a masked store is microcoded on AMD's cores,
// so whole halves take plain ones.
bool whole_half(unsigned lanes, int h) { return ((lanes >> (8 * h)) & 0xFFu) == 0xFFu; }
__m256 load_half(const float* p, unsigned lanes, int h) {
  return whole_half(lanes, h) ? _mm256_loadu_ps(p + 8 * h) : _mm256_maskload_ps(p + 8 * h, half_mask(lanes, h));
}
void store_half(float* p, unsigned lanes, int h, __m256 v) {
  if (whole_half(lanes, h)) return _mm256_storeu_ps(p + 8 * h, v);
  _mm256_maskstore_ps(p + 8 * h, half_mask(lanes, h), v);
}

// The AVX-512 kernel's Grid: what every rounding takes. Magnitudes are below 2^31, so signed
// comparisons order them as unsigned ones do. A kernel holds only the constants its rounding uses
// (PowersOfTwo, Stochastic): with more, GCC kept the nearest-even kernel's sums in memory.
struct Grid {
  __m256i max_finite, min_normal, own_limit, plain_limit;
  __m256i shift_offset;  // nearest-even, M ≥ 1: (23 − M) in the exponent field

  explicit Grid(const Format& f) {
    const int M = f.spec.mantissa_bits;
    const int dropped = format::kFloatMantissaBits - M;
    max_finite = splat(f.max_finite_bits);
    const bool saturates = f.spec.overflow == format::Overflow::saturate || !f.has_nan;
    const std::uint32_t shift_limit = format::float_bits(format::exp2_exact(105 + M)) - 1u;
    const std::uint32_t limit = std::min(saturates ? 0x7F7F'FFFFu : f.max_finite_bits, shift_limit);
    own_limit = splat(limit);
    plain_limit = splat(std::min(limit, f.max_finite_bits));
    min_normal = splat(f.min_normal_bits);
    shift_offset = splat(static_cast<std::uint32_t>(dropped) << format::kFloatMantissaBits);
  }
};

// Nearest-even on a grid of powers of two (M = 0): round_nearest_even_simple()'s constants.
struct PowersOfTwo {
  __m256i keep_mask, half_step_less_one, parity_offset;
  __m256 subnormal_shift;  // below min normal: 2^(emin + 23)

  explicit PowersOfTwo(const Format& f) {
    const std::uint32_t dropped_mask = (1u << format::kFloatMantissaBits) - 1u;
    keep_mask = splat(~dropped_mask);
    half_step_less_one = splat(dropped_mask >> 1);
    parity_offset = splat(static_cast<std::uint32_t>(f.spec.bias + 1) & 1u);
    subnormal_shift = _mm256_set1_ps(format::exp2_exact(f.min_normal_exp + format::kFloatMantissaBits));
  }
};

// Stochastic rounding: round_stochastic_simple()'s constants.
struct Stochastic {
  __m256i keep_mask, step;   // the float32 bits a normal value keeps; one step of them
  __m128i remainder_shift;   // 32 − the bits a normal value drops
  // Below min normal: 2^(M − emin) in two factors (it need not be a float32), and the subnormal
  // step 2^(emin − M).
  __m256 to_steps_first, to_steps_rest, subnormal_step;

  explicit Stochastic(const Format& f) {
    const int M = f.spec.mantissa_bits;
    const int dropped = format::kFloatMantissaBits - M;
    keep_mask = splat(~((1u << dropped) - 1u));
    step = splat(1u << dropped);
    remainder_shift = _mm_cvtsi32_si128(32 - dropped);
    const int to_steps = M - f.min_normal_exp, first = std::min(to_steps, 100);
    to_steps_first = _mm256_set1_ps(format::exp2_exact(first));
    to_steps_rest = _mm256_set1_ps(format::exp2_exact(to_steps - first));
    subnormal_step = _mm256_set1_ps(format::exp2_exact(f.min_normal_exp - M));
  }
};

// Nearest-even with M ≥ 1 takes nothing beyond the Grid.
struct NoConstants {
  explicit NoConstants(const Format&) {}
};

// a < b on unsigned lanes (all ones where true): AVX2 compares only signed ones, so both operands
// have their top bit flipped.
__m256i less_unsigned(__m256i a, __m256i b) {
  const __m256i top = splat(format::kSignBit);
  return _mm256_cmpgt_epi32(_mm256_xor_si256(b, top), _mm256_xor_si256(a, top));
}

// x where the mask lane is all ones, else y.
__m256i select(__m256i mask, __m256i x, __m256i y) { return _mm256_blendv_epi8(y, x, mask); }

// 2^k for lanes k in [−127, 127], exactly: 2^−127 is the one subnormal.
__m256 exp2_lanes(__m256i k) {
  const __m256i normal = _mm256_slli_epi32(_mm256_add_epi32(k, splat(127)), format::kFloatMantissaBits);
  const __m256i subnormal = _mm256_and_si256(_mm256_cmpeq_epi32(k, splat(static_cast<std::uint32_t>(-127))),
                                             splat(1u << (format::kFloatMantissaBits - 1)));
  return _mm256_castsi256_ps(_mm256_or_si256(normal, subnormal));
}

// The AVX-512 kernel's round_nearest_even(). Its sum is rounded by MXCSR's mode, nearest-even: the
// mode a process starts in, which AltGrad never changes.
__m256i round_nearest_even(const Grid& g, __m256i a) {
  const __m256i exponent = _mm256_max_epu32(_mm256_and_si256(a, splat(format::kFloatInfBits)), g.min_normal);
  const __m256 shift = _mm256_castsi256_ps(_mm256_add_epi32(exponent, g.shift_offset));
  return _mm256_castps_si256(_mm256_sub_ps(_mm256_add_ps(_mm256_castsi256_ps(a), shift), shift));
}

// The AVX-512 kernel's round_nearest_even_powers_of_two() (M = 0), in round_nearest_even_simple()'s
// words: a tie goes up where the kept bits' lowest, offset by the bias's parity, is odd.
[[gnu::always_inline]] inline __m256i round_nearest_even_powers_of_two(const Grid& g, const PowersOfTwo& p,
                                                                       __m256i a) {
  const __m256i lsb =
      _mm256_and_si256(_mm256_add_epi32(_mm256_srli_epi32(a, format::kFloatMantissaBits), p.parity_offset), splat(1));
  const __m256i normal = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(a, p.half_step_less_one), lsb), p.keep_mask);
  const __m256 shifted = _mm256_add_ps(_mm256_castsi256_ps(a), p.subnormal_shift);
  const __m256i subnormal = _mm256_castps_si256(_mm256_sub_ps(shifted, p.subnormal_shift));
  return select(_mm256_cmpgt_epi32(g.min_normal, a), subnormal, normal);
}

// round_stochastic_simple(), lane by lane: above min normal the dropped bits, taken to the top of a
// word, against the random word; below it |x| in subnormal steps, whose whole part and fraction
// come from exact conversions (the fraction to 32 bits in two 16-bit halves, as AVX2 converts only
// to signed integers).
[[gnu::always_inline]] inline __m256i round_stochastic(const Grid& g, const Stochastic& s, __m256i a,
                                                       __m256i random) {
  const __m256i up = less_unsigned(random, _mm256_sll_epi32(a, s.remainder_shift));
  const __m256i normal = _mm256_add_epi32(_mm256_and_si256(a, s.keep_mask), _mm256_and_si256(up, s.step));

  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_castsi256_ps(a), s.to_steps_first), s.to_steps_rest);
  const __m256i whole = _mm256_cvttps_epi32(y);
  const __m256 fraction = _mm256_sub_ps(y, _mm256_cvtepi32_ps(whole));
  const __m256 sixteen_bits = _mm256_set1_ps(65536.0f);
  const __m256 high_part = _mm256_mul_ps(fraction, sixteen_bits);
  const __m256i high = _mm256_cvttps_epi32(high_part);
  const __m256i low = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_sub_ps(high_part, _mm256_cvtepi32_ps(high)), sixteen_bits));
  const __m256i sub_up = less_unsigned(random, _mm256_or_si256(_mm256_slli_epi32(high, 16), low));
  const __m256i steps = _mm256_sub_epi32(whole, sub_up);  // a true lane is −1
  const __m256i subnormal = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(steps), s.subnormal_step));
  return select(_mm256_cmpgt_epi32(g.min_normal, a), subnormal, normal);
}

// The AVX-512 kernel's sum_lanes over [half][quarter] registers: lane k with k + 8, k + 4, k + 2, k + 1.
double sum_lanes(const __m256d (&lanes)[2][2]) {
  const __m256d four = _mm256_add_pd(_mm256_add_pd(lanes[0][0], lanes[1][0]), _mm256_add_pd(lanes[0][1], lanes[1][1]));
  const __m128d two = _mm_add_pd(_mm256_castpd256_pd128(four), _mm256_extractf128_pd(four, 1));
  return _mm_cvtsd_f64(_mm_add_sd(two, _mm_unpackhi_pd(two, two)));
}

// The sum of a tally's eight 32-bit counts, widened to 64 bits.
std::uint64_t tally_sum(__m256i tally) {
  const __m256i wide = _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(tally)),
                                        _mm256_cvtepu32_epi64(_mm256_extracti128_si256(tally, 1)));
  const __m128i two = _mm_add_epi64(_mm256_castsi256_si128(wide), _mm256_extracti128_si256(wide, 1));
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(two)) + static_cast<std::uint64_t>(_mm_extract_epi64(two, 1));
}

// The largest of eight non-negative lanes, halving in registers.
float largest_amax_lane(__m256 v) {
  const __m128 four = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 two = _mm_max_ps(four, _mm_movehl_ps(four, four));
  return _mm_cvtss_f32(_mm_max_ss(two, _mm_shuffle_ps(two, two, 1)));
}

// One quarter (4 lanes) of a half as doubles.
__m256d quarter(__m256 v, int q) { return _mm256_cvtps_pd(q ? _mm256_extractf128_ps(v, 1) : _mm256_castps256_ps128(v)); }
__m256d quarter_mask(__m256i mask, int q) {
  return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(q ? _mm256_extracti128_si256(mask, 1) : _mm256_castsi256_si128(mask)));
}

// The AVX-512 kernel's Accumulators, lane for lane, filled one half of a vector (8 lanes) at a
// time. The zero counts are kept per lane in vectors (a compare's all-ones lane is −1, so
// subtracting it counts one) rather than through masks and popcounts: a half's lanes past the array
// are zeros in and out, so they add as many to zero_tally as to grid_zero_tally, and totals() takes
// them back out. Each lane counts at most two per half, so the 32-bit tallies hold 2^31 halves,
// more elements than one call is ever given. Without kSums (ErrorSums::skip) the two error sums are
// neither kept nor added: the instance's loops hold no trace of them.
template <bool kSums>
struct Accumulators {
  __m256 amax = _mm256_setzero_ps();  // both halves' lanes: a maximum's order changes nothing
  __m256d sum_sq_error[2][2] = {{_mm256_setzero_pd(), _mm256_setzero_pd()}, {_mm256_setzero_pd(), _mm256_setzero_pd()}};
  __m256d sum_sq_input[2][2] = {{_mm256_setzero_pd(), _mm256_setzero_pd()}, {_mm256_setzero_pd(), _mm256_setzero_pd()}};
  __m256i zero_tally = _mm256_setzero_si256();       // inputs ±0, lanes past the array included
  __m256i grid_zero_tally = _mm256_setzero_si256();  // outputs ±0, lanes past the array included
  std::uint64_t padding = 0;  // lanes tallied past the array
  std::uint64_t count = 0;
  std::uint64_t overflow = 0;
  unsigned overflow_lanes = 0;

  // x and the dequantized y of half H of a vector, its lanes all finite; lanes beyond the array are
  // 0. `valid` and `overflowed` hold this half's lanes. Without kAmax the caller knows the amax
  // already (the column tiles' own pass found it). Always inlined: GCC left it out of line once the
  // kernel had more instances, and the sums then went through memory for every vector.
  template <int H, bool kAmax = true>
  [[gnu::always_inline]] void add(__m256 x, __m256 y, __m256i on_grid, unsigned valid, unsigned overflowed) {
    count += static_cast<std::uint64_t>(std::popcount(valid));
    padding += 8 - static_cast<std::uint64_t>(std::popcount(valid));
    if (overflowed) {
      overflow += static_cast<std::uint64_t>(std::popcount(overflowed));
      overflow_lanes |= overflowed;
    }
    const __m256 magnitude = _mm256_and_ps(x, _mm256_castsi256_ps(splat(~format::kSignBit)));
    if constexpr (kAmax) amax = _mm256_max_ps(amax, magnitude);
    const __m256i zero = _mm256_setzero_si256();
    zero_tally = _mm256_sub_epi32(zero_tally, _mm256_cmpeq_epi32(_mm256_castps_si256(magnitude), zero));
    grid_zero_tally = _mm256_sub_epi32(grid_zero_tally, _mm256_cmpeq_epi32(on_grid, zero));
    if constexpr (kSums) {
      for (int q = 0; q < 2; ++q) {
        const __m256d xd = quarter(x, q), error = _mm256_sub_pd(xd, quarter(y, q));
        sum_sq_error[H][q] = _mm256_fmadd_pd(error, error, sum_sq_error[H][q]);
        sum_sq_input[H][q] = _mm256_fmadd_pd(xd, xd, sum_sq_input[H][q]);
      }
    }
  }

  // The AVX-512 kernel's add_handed_over(), for half H: the sums of lanes the portable kernel
  // quantized (lanes past the array are 0 in and out).
  template <int H>
  void add_handed_over(__m256 x, __m256 y) {
    if constexpr (!kSums) return;
    const __m256 magnitude_mask = _mm256_castsi256_ps(splat(~format::kSignBit));
    const __m256 max_finite = _mm256_set1_ps(std::numeric_limits<float>::max());
    const __m256d inf = _mm256_set1_pd(std::numeric_limits<double>::infinity());
    const __m256 x_finite = _mm256_cmp_ps(_mm256_and_ps(x, magnitude_mask), max_finite, _CMP_LE_OQ);
    const __m256 both_finite =
        _mm256_and_ps(x_finite, _mm256_cmp_ps(_mm256_and_ps(y, magnitude_mask), max_finite, _CMP_LE_OQ));
    const __m256 output_not_finite = _mm256_andnot_ps(both_finite, x_finite);
    for (int q = 0; q < 2; ++q) {
      const __m256d xd = quarter(x, q), error = _mm256_sub_pd(xd, quarter(y, q));
      const __m256d both = quarter_mask(_mm256_castps_si256(both_finite), q);
      __m256d& e = sum_sq_error[H][q];
      e = _mm256_blendv_pd(e, _mm256_fmadd_pd(error, error, e), both);
      e = _mm256_blendv_pd(e, _mm256_add_pd(e, inf), quarter_mask(_mm256_castps_si256(output_not_finite), q));
      __m256d& sq = sum_sq_input[H][q];
      sq = _mm256_blendv_pd(sq, _mm256_fmadd_pd(xd, xd, sq), quarter_mask(_mm256_castps_si256(x_finite), q));
    }
  }

  // Adds the error and input sums to `s` and clears them. A call's segments add their sums one by
  // one; its counts and amax are the same whenever they are taken, and wait for totals().
  void move_sums_to(QuantStats& s) {
    if constexpr (!kSums) return;
    s.sum_sq_error += sum_lanes(sum_sq_error);
    s.sum_sq_input += sum_lanes(sum_sq_input);
    for (int h = 0; h < 2; ++h) {
      for (int q = 0; q < 2; ++q) sum_sq_error[h][q] = sum_sq_input[h][q] = _mm256_setzero_pd();
    }
  }

  QuantStats totals() const {
    QuantStats s;
    s.count = count;
    s.overflow = overflow;
    // A zero input always rounds to zero; the other zero outputs are underflows.
    const std::uint64_t zero_lanes = tally_sum(zero_tally);
    s.underflow = tally_sum(grid_zero_tally) - zero_lanes;
    s.zero_inputs = zero_lanes - padding;
    s.amax = largest_amax_lane(amax);
    if constexpr (kSums) {
      s.sum_sq_error = sum_lanes(sum_sq_error);
      s.sum_sq_input = sum_lanes(sum_sq_input);
    }
    return s;
  }
};

// Half h of the random words at p whose lanes `lanes` are elements, as load_half() loads floats.
__m256i load_words_half(const std::uint32_t* p, unsigned lanes, int h) {
  const auto* words = reinterpret_cast<const int*>(p + 8 * h);
  if (whole_half(lanes, h)) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words));
  return _mm256_maskload_epi32(words, half_mask(lanes, h));
}

// The AVX-512 kernel's Kernel, one half of a vector at a time: a pass over an array takes the first
// eight lanes of every vector, a second pass the last eight. Each lane still adds its elements in
// order, so the sums are the AVX-512 kernel's; and a pass keeps only its half's sums in registers,
// where all sixteen lanes' sums with the grid's constants would not fit AVX2's sixteen registers and
// went through memory for every vector. `random` (stochastic rounding only) holds a word per
// element, lane for lane with `in`.
template <Rounding R, bool kNegativeZero, bool kPowersOfTwo>
struct Kernel {
  using Constants =
      std::conditional_t<R == kStochastic, Stochastic, std::conditional_t<kPowersOfTwo, PowersOfTwo, NoConstants>>;
  Grid grid;
  [[no_unique_address]] Constants constants;

  explicit Kernel(const Format& f) : grid(f), constants(f) {}

  // Half H of the vector at `in` whose lanes `valid` (this half's only) are elements: quantized
  // and counted, or false, having written and counted nothing, where a lane's product is past the
  // kernel's reach.
  template <int H, bool kExactInverse, bool kAmax = true, bool kSums>
  [[gnu::always_inline]] bool quantize_half(const float* in, float* out, const std::uint32_t* random, unsigned valid,
                                            __m256 scale, __m256 back, Accumulators<kSums>& acc) const {
    const __m256 x = load_half(in, valid, H);
    const __m256i product = _mm256_castps_si256(_mm256_mul_ps(x, scale));
    const __m256i a = _mm256_and_si256(product, splat(~format::kSignBit));
    const unsigned beyond = bits_of(_mm256_cmpgt_epi32(a, grid.plain_limit), H);
    if (beyond && bits_of(_mm256_cmpgt_epi32(a, grid.own_limit), H)) return false;
    __m256i on_grid;
    if constexpr (R == kStochastic) {
      on_grid = round_stochastic(grid, constants, a, load_words_half(random, valid, H));
    } else if constexpr (kPowersOfTwo) {
      on_grid = round_nearest_even_powers_of_two(grid, constants, a);
    } else {
      on_grid = round_nearest_even(grid, a);
    }
    unsigned overflowed = 0;
    if (beyond) {
      overflowed = bits_of(_mm256_cmpgt_epi32(on_grid, grid.max_finite), H);
      on_grid = _mm256_min_epu32(on_grid, grid.max_finite);
    }
    __m256i sign = _mm256_and_si256(product, splat(format::kSignBit));
    if constexpr (!kNegativeZero) sign = _mm256_andnot_si256(_mm256_cmpeq_epi32(on_grid, _mm256_setzero_si256()), sign);
    const __m256 q = _mm256_castsi256_ps(_mm256_or_si256(on_grid, sign));
    const __m256 y = kExactInverse ? _mm256_mul_ps(q, back) : _mm256_div_ps(q, back);
    acc.template add<H, kAmax>(x, y, on_grid, valid, overflowed);
    store_half(out, valid, H, y);
    return true;
  }

  template <bool kSums>
  void run(const Format& f, const float* in, float* out, const std::uint32_t* random, std::size_t n, float scale_value,
           std::size_t first_lane, Accumulators<kSums>& acc, QuantStats& handed_over) const {
    if (is_power_of_two_scale(scale_value)) {
      run<true>(f, in, out, random, n, scale_value, 1.0f / scale_value, first_lane, acc, handed_over);
    } else {
      run<false>(f, in, out, random, n, scale_value, scale_value, first_lane, acc, handed_over);
    }
  }

  template <bool kExactInverse, bool kSums>
  [[gnu::always_inline]] void run(const Format& f, const float* in, float* out, const std::uint32_t* random,
                                  std::size_t n, float scale_value, float back_value, std::size_t first_lane,
                                  Accumulators<kSums>& acc, QuantStats& handed_over) const {
    // A copy that nothing outside this function can reach, so that the sums stay in registers
    // through the loop rather than going through memory for every vector.
    Accumulators<kSums> sums = acc;
    const __m256 scale = _mm256_set1_ps(scale_value), back = _mm256_set1_ps(back_value);
    const Elements at{in, out, random};
    pass<0, kExactInverse>(f, at, n, first_lane, scale, back, scale_value, sums, handed_over);
    pass<1, kExactInverse>(f, at, n, first_lane, scale, back, scale_value, sums, handed_over);
    acc = sums;
  }

  // Where a run's elements are: inputs, outputs and their random words (read by stochastic rounding
  // only; nearest-even's steps carry none, so that its loops keep no pointer for them).
  struct Elements {
    const float* in;
    float* out;
    const std::uint32_t* random;

    Elements operator+(std::size_t e) const { return {in + e, out + e, R == kStochastic ? random + e : nullptr}; }
  };

  // Half H of every vector over the n elements at `at`, which begin at lane `first_lane`.
  template <int H, bool kExactInverse, bool kSums>
  [[gnu::always_inline]] void pass(const Format& f, const Elements& at, std::size_t n, std::size_t first_lane,
                                   __m256 scale, __m256 back, float scale_value, Accumulators<kSums>& sums,
                                   QuantStats& handed_over) const {
    std::size_t e = 0;
    if (first_lane != 0) {
      e = std::min(kLanes - first_lane, n);
      step<H, kExactInverse>(f, at, first_lane, e, scale, back, scale_value, sums, handed_over);
    }
    for (; e + kLanes <= n; e += kLanes) {
      step<H, kExactInverse>(f, at + e, 0, kLanes, scale, back, scale_value, sums, handed_over);
    }
    if (e < n) step<H, kExactInverse>(f, at + e, 0, n - e, scale, back, scale_value, sums, handed_over);
  }

  // Half H of the `count` elements at `at` taken as one vector from lane `lane` on: this kernel's,
  // or where it does not cover them, the portable kernel's (hand_over), whose sums are added in
  // this kernel's lanes.
  template <int H, bool kExactInverse, bool kSums>
  [[gnu::always_inline]] void step(const Format& f, const Elements& at, std::size_t lane, std::size_t count,
                                   __m256 scale, __m256 back, float scale_value, Accumulators<kSums>& sums,
                                   QuantStats& handed_over) const {
    const unsigned valid = (((1u << count) - 1u) << lane) & (0xFFu << (8 * H));
    if (valid == 0) return;
    const float* in_vector = lanes_before(at.in, lane);
    float* out_vector = lanes_before(at.out, lane);
    const std::uint32_t* words_vector = R == kStochastic ? lanes_before(at.random, lane) : nullptr;
    if (quantize_half<H, kExactInverse>(in_vector, out_vector, words_vector, valid, scale, back, sums)) [[likely]] {
      return;
    }
    const __m256 x = load_half(in_vector, valid, H);  // `in` may be `out`
    const auto first = static_cast<std::size_t>(std::countr_zero(valid));
    const auto end = static_cast<std::size_t>(std::bit_width(valid));
    hand_over(f, in_vector + first, out_vector + first, R == kStochastic ? words_vector + first : nullptr, end - first,
              scale_value, handed_over);
    sums.template add_handed_over<H>(x, load_half(out_vector, valid, H));
  }

  // The portable kernel's work on lanes this one does not cover, with its counts and without its
  // sums, which are added in this kernel's lanes instead (Accumulators::add_handed_over). Rare, so
  // kept out of line.
  [[gnu::noinline]] static void hand_over(const Format& f, const float* in, float* out, const std::uint32_t* random,
                                          std::size_t count, float scale, QuantStats& handed_over) {
    quantize_block_portable(f, R, in, out, count, scale, random, handed_over, ErrorSums::skip);
  }
};

// The AVX-512 kernel's Quantizer, for one rounding, sign rule and (nearest-even) kind of grid. Its
// entry points stay functions of their own: inlined into the dispatch, all instances in one body,
// GCC kept the column tiles' sums in memory.
// Each entry point comes in two instances: with the error sums (kSums) and without.
template <Rounding R, bool kNegativeZero, bool kPowersOfTwo>
struct Quantizer {
  using QuantKernel = Kernel<R, kNegativeZero, kPowersOfTwo>;

  // ErrorSums as the template argument of the instance that gathers (or skips) them.
  static constexpr ErrorSums sums_of(bool gather) { return gather ? ErrorSums::gather : ErrorSums::skip; }

  template <bool kSums>
  [[gnu::noinline]] static void block(const Format& f, const float* in, float* out, std::size_t n, float scale,
                                      const std::uint32_t* random, QuantStats& stats) {
    if (!outputs_stay_finite(f, scale)) {
      return quantize_block_portable(f, R, in, out, n, scale, random, stats, sums_of(kSums));
    }
    const QuantKernel kernel(f);
    Accumulators<kSums> acc;
    QuantStats handed_over;
    kernel.run(f, in, out, random, n, scale, lane_of(in), acc, handed_over);
    stats.merge(acc.totals());
    stats.merge(handed_over);
  }

  // One set of register statistics per call, whose sums are added to `stats` segment by segment
  // (end_segment); a block's overflows are what the counters gained during it. A block's scale is
  // checked by its exponent: per block, a division by the scale costs as much as the rounding.
  // Blocks of other lengths, or with an exponent past the kernel's reach, go one at a time.
  template <bool kSums>
  [[gnu::noinline]] static void scaled_blocks(const Format& f, const float* in, float* out, std::size_t n,
                                              std::size_t block, const int* exponents, const std::uint32_t* random,
                                              std::uint64_t* overflows, QuantStats& stats, std::size_t segment) {
    const QuantKernel kernel(f);
    const int largest_exponent = largest_finite_exponent(f);
    Accumulators<kSums> sums;
    QuantStats handed_over;
    const std::size_t blocks = (n + block - 1) / block;
    if (block % kLanes == 0 && n % block == 0 &&
        std::all_of(exponents, exponents + blocks, [&](int e) { return e <= largest_exponent; })) {
      whole_vector_blocks(kernel, f, in, out, random, n, block, exponents, overflows, segment, sums, handed_over, stats);
    } else {
      std::size_t segment_end = std::min(segment, n);
      for (std::size_t begin = 0, b = 0; begin < n; begin += block, ++b) {
        const std::size_t len = std::min(block, n - begin);
        const std::uint32_t* words = random ? random + begin : nullptr;
        const float scale_value = format::exp2_exact(-exponents[b]);
        const std::uint64_t before = sums.overflow + handed_over.overflow;
        if (exponents[b] <= largest_exponent) {
          kernel.template run<true>(f, in + begin, out + begin, words, len, scale_value, format::exp2_exact(exponents[b]),
                                    0, sums, handed_over);
        } else {
          quantize_block_portable(f, R, in + begin, out + begin, len, scale_value, words, handed_over, sums_of(kSums));
        }
        overflows[b] = sums.overflow + handed_over.overflow - before;
        if (begin + len >= segment_end) {
          end_segment(sums, handed_over, stats);
          segment_end = std::min(segment_end + segment, n);
        }
      }
    }
    stats.merge(sums.totals());
    stats.merge(handed_over);
  }

  // Blocks of whole vectors (mx8's 32), each within the format's reach, in groups of up to
  // kGroupBlocks blocks of one segment: the group's scales, then a pass over its vectors' first
  // halves and one over their second halves (Kernel). A block's set-up is two broadcasts: its
  // scales are computed for the group beforehand, out of the passes' loops.
  static constexpr std::size_t kGroupBlocks = 64;

  // Blocks of a group: their elements and random words, scales, inverse scales and overflow counts.
  struct Group {
    typename QuantKernel::Elements at;
    std::size_t blocks, block;
    const float *scales, *backs;
    std::uint64_t* overflows;
  };

  template <bool kSums>
  static void whole_vector_blocks(const QuantKernel& kernel, const Format& f, const float* in, float* out,
                                  const std::uint32_t* random, std::size_t n, std::size_t block, const int* exponents,
                                  std::uint64_t* overflows, std::size_t segment, Accumulators<kSums>& sums,
                                  QuantStats& handed_over, QuantStats& stats) {
    std::fill_n(overflows, n / block, std::uint64_t{0});
    alignas(32) float scales[kGroupBlocks], backs[kGroupBlocks];
    const typename QuantKernel::Elements elements{in, out, random};
    for (std::size_t segment_begin = 0; segment_begin < n; segment_begin += segment) {
      const std::size_t segment_end = std::min(segment_begin + segment, n);
      for (std::size_t begin = segment_begin; begin < segment_end; begin += kGroupBlocks * block) {
        const std::size_t first = begin / block, blocks = std::min(kGroupBlocks, (segment_end - begin) / block);
        for (std::size_t b = 0; b < blocks; ++b) {
          scales[b] = format::exp2_exact(-exponents[first + b]);
          backs[b] = format::exp2_exact(exponents[first + b]);
        }
        const Group group{elements + begin, blocks, block, scales, backs, overflows + first};
        if (block == 2 * kLanes) {
          blocks_pass<0, 2>(kernel, f, group, sums, handed_over);
          blocks_pass<1, 2>(kernel, f, group, sums, handed_over);
        } else {
          blocks_pass<0, 0>(kernel, f, group, sums, handed_over);
          blocks_pass<1, 0>(kernel, f, group, sums, handed_over);
        }
      }
      end_segment(sums, handed_over, stats);
    }
  }

  // Half H of every vector of a group; adds each block's overflows. With kVectors (mx8's 32
  // elements: two) the loop over a block's vectors is unrolled; other sizes (kVectors = 0) loop.
  template <int H, std::size_t kVectors, bool kSums>
  static void blocks_pass(const QuantKernel& kernel, const Format& f, const Group& g, Accumulators<kSums>& sums,
                          QuantStats& handed_over) {
    const std::size_t vectors_per_block = kVectors ? kVectors : g.block / kLanes;
    for (std::size_t b = 0; b < g.blocks; ++b) {
      const __m256 scale = _mm256_broadcast_ss(g.scales + b), back = _mm256_broadcast_ss(g.backs + b);
      const std::uint64_t before = sums.overflow + handed_over.overflow;
      for (std::size_t v = 0, e = b * g.block; v < vectors_per_block; ++v, e += kLanes) {
        kernel.template step<H, true>(f, g.at + e, 0, kLanes, scale, back, g.scales[b], sums, handed_over);
      }
      g.overflows[b] += sums.overflow + handed_over.overflow - before;
    }
  }

  // A segment's sums into `stats`, in the order a call of its own would add them: the vector
  // kernel's, then the handed-over vectors'.
  template <bool kSums>
  static void end_segment(Accumulators<kSums>& sums, QuantStats& handed_over, QuantStats& stats) {
    sums.move_sums_to(stats);
    stats.sum_sq_error += handed_over.sum_sq_error;
    stats.sum_sq_input += handed_over.sum_sq_input;
    handed_over.sum_sq_error = handed_over.sum_sq_input = 0.0;
  }

  // A column tile: `rows` rows `stride` floats apart, row r's random words at random[16·r + j]
  // (quantize_column_blocks_vector).
  struct Tile {
    const float* in;
    float* out;
    const std::uint32_t* random;
    std::size_t stride, rows;
  };

  // Half H of every row of a tile, its lanes `valid`.
  template <int H, bool kSums>
  [[gnu::always_inline]] static void tile_half(const QuantKernel& kernel, const Tile& t, unsigned valid, __m256 scale,
                                               __m256 back, Accumulators<kSums>& acc) {
    for (std::size_t r = 0; r < t.rows; ++r) {
      const std::uint32_t* words = R == kStochastic ? t.random + kLanes * r : nullptr;
      kernel.template quantize_half<H, true, false>(t.in + r * t.stride, t.out + r * t.stride, words, valid, scale, back,
                                                    acc);
    }
  }

  template <bool kSums>
  [[gnu::noinline]] static bool column_blocks(const Format& f, const float* in, float* out, std::size_t stride,
                                              std::size_t rows, std::size_t width, const float* finite_amax,
                                              bool all_finite, const int* exponents, const std::uint32_t* random,
                                              std::uint32_t& clipped_columns, QuantStats& stats) {
    if (!all_finite) return false;
    const QuantKernel kernel(f);
    // Lanes past `width` take exponent 0 (scale 1) and amax 0.
    int lane_exponents[kLanes] = {};
    float amax[kLanes] = {};
    if (width == kLanes) {
      std::memcpy(lane_exponents, exponents, sizeof lane_exponents);
      std::memcpy(amax, finite_amax, sizeof amax);
    } else {
      std::copy_n(exponents, width, lane_exponents);
      std::copy_n(finite_amax, width, amax);
    }
    const __m256i largest_exponent = splat(static_cast<std::uint32_t>(largest_finite_exponent(f)));
    __m256 scale[2], back[2];
    for (int h = 0; h < 2; ++h) {
      const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lane_exponents + 8 * h));
      if (_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(e, largest_exponent))) != 0) return false;
      scale[h] = exp2_lanes(_mm256_sub_epi32(_mm256_setzero_si256(), e));
      back[h] = exp2_lanes(e);
      // x·s is monotone in |x|, so a column's largest product is its amax times its scale.
      const __m256 largest = _mm256_mul_ps(_mm256_loadu_ps(amax + 8 * h), scale[h]);
      const __m256i magnitude = _mm256_and_si256(_mm256_castps_si256(largest), splat(~format::kSignBit));
      if (_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(magnitude, kernel.grid.own_limit))) != 0) {
        return false;
      }
    }
    // Every value is finite, so the tile's amax is the columns' largest; and every product is
    // within the kernel's reach (checked above), so no half is refused.
    Accumulators<kSums> acc;
    const Tile tile{in, out, random, stride, rows};
    if (width == kLanes) {
      tile_half<0>(kernel, tile, 0xFFu, scale[0], back[0], acc);  // the common tile: no masks
      tile_half<1>(kernel, tile, 0xFF00u, scale[1], back[1], acc);
    } else {
      const unsigned valid = (1u << width) - 1u;
      tile_half<0>(kernel, tile, valid & 0xFFu, scale[0], back[0], acc);
      if (width > 8) tile_half<1>(kernel, tile, valid & 0xFF00u, scale[1], back[1], acc);
    }
    acc.amax = _mm256_max_ps(_mm256_loadu_ps(amax), _mm256_loadu_ps(amax + 8));
    clipped_columns = acc.overflow_lanes;
    stats.merge(acc.totals());
    return true;
  }
};

}  // namespace

bool has_vector_kernel(const Format& f, Rounding rounding) {
  return (rounding == kNearest || rounding == kStochastic) && format::has_simple_grid(f);
}

void quantize_block_vector(const Format& f, Rounding rounding, const float* in, float* out, std::size_t n, float scale,
                           const std::uint32_t* random, QuantStats& stats, ErrorSums sums) {
  if (!has_vector_kernel(f, rounding)) {
    return quantize_block_portable(f, rounding, in, out, n, scale, random, stats, sums);
  }
  vector_lanes::with_quantizer<Quantizer>(f, rounding, [&](auto quantizer) {
    if (sums == ErrorSums::gather) return quantizer.template block<true>(f, in, out, n, scale, random, stats);
    quantizer.template block<false>(f, in, out, n, scale, random, stats);
  });
}

void quantize_scaled_blocks_vector(const Format& f, Rounding rounding, const float* in, float* out, std::size_t n,
                                   std::size_t block, const int* exponents, const std::uint32_t* random,
                                   std::uint64_t* overflows, QuantStats& stats, std::size_t segment, ErrorSums sums) {
  if (!has_vector_kernel(f, rounding)) {
    return quantize_scaled_blocks_portable(f, rounding, in, out, n, block, exponents, random, overflows, stats, sums);
  }
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

#endif
