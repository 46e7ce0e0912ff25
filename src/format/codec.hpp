#pragma once
// Rounding float32 values onto a format's grid, and converting between values and codes.
//
// round_bits() is the single definition of quantization: it returns the float32 bits of the
// format value that x rounds to. It is branch-free on the finite path so the compiler vectorizes
// the quantizer loops that inline it. encode() and decode() convert between such values and codes.
#include <cstdint>

#include "format/bits.hpp"
#include "format/host_device.hpp"
#include "format/rounding.hpp"
#include "format/spec.hpp"

namespace altgrad::format {

// One rounded value: float32 bits of the result, and whether it overflowed or underflowed (0/1,
// integers so that loops accumulating them vectorize).
struct Rounded {
  std::uint32_t bits;
  std::uint32_t overflow;   // the rounded magnitude exceeded max finite (before saturation)
  std::uint32_t underflow;  // a nonzero input rounded below the smallest positive value
};

// What rounding one value did, beyond producing it.
struct RoundFlags {
  bool overflow = false;   // the rounded magnitude exceeded max finite (before saturation)
  bool underflow = false;  // a nonzero input rounded below the smallest positive value
};

namespace detail {

// floor(log2(a)) for the magnitude bits of a finite float; very negative for zero.
ALTGRAD_HD inline int floor_log2_bits(std::uint32_t a) {
  const int e = static_cast<int>(a >> kFloatMantissaBits);
  // A subnormal's leading bit: converting its integer significand to float is exact and reads it off.
  const float as_integer = static_cast<float>(static_cast<std::int32_t>(a));
  const int sub = static_cast<int>(float_bits(as_integer) >> kFloatMantissaBits) - 2 * kFloatBias - 22;
  return e > 0 ? e - kFloatBias : sub;
}

// c ? x : y with masks: GCC's if-conversion gives up on chains of ternaries, and a loop it cannot
// if-convert does not vectorize.
ALTGRAD_HD inline std::uint32_t select(bool c, std::uint32_t x, std::uint32_t y) {
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(c);
  return (x & mask) | (y & ~mask);
}

// The magnitude bits of |x| rounded onto the format's grid extended upward (exponent unbounded),
// for finite a = |x| bits. Beyond max finite the result is whatever lies there (Inf included).
template <Rounding R>
ALTGRAD_HD inline std::uint32_t extended_grid_magnitude(const Format& f, std::uint32_t a, std::uint32_t sign,
                                                        std::uint32_t random) {
  const int M = f.spec.mantissa_bits;
  // Position of a on the grid: the step is 2^q, a = m * 2^(ef - 150).
  const int e = static_cast<int>(a >> kFloatMantissaBits);
  const int ef = e > 0 ? e : 1;
  const std::uint32_t m = (a & 0x7F'FFFFu) | select(e > 0, 0x80'0000u, 0u);
  const int lead = floor_log2_bits(a);
  const bool normal = lead >= f.min_normal_exp;
  const int step_bits = (normal | f.spec.subnormals) ? M : 0;
  const int q = (normal ? lead : f.min_normal_exp) - step_bits;
  const int d = q - (ef - 150);  // bits of m below the step: 0 (a grid as fine as float32's) or more
  // Twice m, so that the remainder keeps at least one bit and half a step is a whole number even when
  // d = 0 (then the remainder is 0: the input is on the grid). m < 2^24, so 2m fits.
  const std::uint32_t m2 = m << 1;
  const int d2 = d + 1;
  const int dc = d2 < 31 ? d2 : 31;
  const std::uint32_t n = m2 >> dc;
  const std::uint32_t rem = m2 & ((1u << dc) - 1u);  // 2x the remainder below the step
  const std::uint32_t half = 1u << (dc - 1);          // 2x half a step
  // Parity of the truncated code: n's for M >= 1, the exponent field's when there is no mantissa.
  const std::uint32_t field_parity = static_cast<std::uint32_t>(lead + f.spec.bias) & 1u;
  const std::uint32_t lsb = select((M == 0) & normal, field_parity, n & 1u);
  // 0/1 integers rather than bools: GCC does not vectorize bool arithmetic in these loops.
  const std::uint32_t inexact = rem != 0 ? 1u : 0u;
  const std::uint32_t neg = sign >> 31;

  std::uint32_t up = 0;
  if constexpr (R == Rounding::nearest_even) up = (rem > half ? 1u : 0u) | ((rem == half ? 1u : 0u) & lsb);
  if constexpr (R == Rounding::nearest_away) up = rem >= half ? 1u : 0u;
  if constexpr (R == Rounding::toward_positive) up = inexact & (neg ^ 1u);
  if constexpr (R == Rounding::toward_negative) up = inexact & neg;
  if constexpr (R == Rounding::odd) up = inexact & (lsb ^ 1u);
  if constexpr (R == Rounding::stochastic) {
    // The fraction of a step below m, as a 32-bit fixed-point number: rem / 2^d2 * 2^32.
    const int right = d2 - 32 < 31 ? d2 - 32 : 31;
    const std::uint32_t frac32 = d2 <= 32 ? rem << (32 - d2) : rem >> right;
    up = random < frac32 ? 1u : 0u;
  }
  if constexpr (R == Rounding::stochastic_equal) up = inexact & (random >> 31);

  // Exact: n_rounded * 2^q lies on the format grid, which validate() keeps inside float32; beyond
  // the top it may round to Inf, which is an overflow anyway.
  const std::uint32_t n_rounded = n + up;
  return float_bits(static_cast<float>(static_cast<std::int32_t>(n_rounded)) * exp2_exact(q));
}

// Everything after rounding the magnitude: overflow, the no-zero clamp, the sign, and non-finite or
// unrepresentable inputs. Selects, not branches, so loops that inline it vectorize.
template <Rounding R>
ALTGRAD_HD inline Rounded finish_rounding(const Format& f, std::uint32_t a, std::uint32_t sign,
                                          std::uint32_t on_grid) {
  const bool negative = sign != 0;
  // Overflow: IEEE 754 §7.4 sends the modes that point back toward zero to max finite.
  constexpr bool kToMax = R == Rounding::toward_zero || R == Rounding::odd;
  constexpr bool kToMaxIfNegative = R == Rounding::toward_positive;
  constexpr bool kToMaxIfPositive = R == Rounding::toward_negative;
  const bool to_max = (f.spec.overflow == Overflow::saturate) | !f.has_nan | kToMax |
                      (kToMaxIfNegative & negative) | (kToMaxIfPositive & !negative);
  const std::uint32_t beyond = select(f.has_inf, kFloatInfBits, kFloatQuietNanBits);
  const bool overflow = on_grid > f.max_finite_bits;
  const bool underflow = (a != 0) & (on_grid < f.min_positive_bits);
  std::uint32_t r = select(overflow, select(to_max, f.max_finite_bits, beyond), on_grid);
  r = select(!f.has_zero & (r < f.min_positive_bits), f.min_positive_bits, r);
  const bool keep_sign = negative & f.has_sign & (r != kFloatQuietNanBits) & ((r != 0) | f.has_negative_zero);
  r |= select(keep_sign, kSignBit, 0u);

  const bool is_inf = a == kFloatInfBits;
  const bool finite_input = a < kFloatInfBits;
  const bool unsigned_negative = !f.has_sign & negative & (a != 0);
  const std::uint32_t nan_result = select(f.has_nan, kFloatQuietNanBits, f.max_finite_bits);
  std::uint32_t inf_result = select(f.has_nan, kFloatQuietNanBits, f.max_finite_bits | select(f.has_sign, sign, 0u));
  inf_result = select(f.has_inf, sign | kFloatInfBits, inf_result);
  r = select(unsigned_negative, kFloatQuietNanBits, r);
  r = select(finite_input, r, select(is_inf, inf_result, nan_result));
  const bool counted = finite_input & !unsigned_negative;
  return {r, static_cast<std::uint32_t>(overflow & counted), static_cast<std::uint32_t>(underflow & counted)};
}

}  // namespace detail

// Rounds the float with bits `x` onto the grid of `f`. `random` is a uniform 32-bit word, used by
// the stochastic modes only. Returns float32 bits of the result (NaN results are the positive quiet
// NaN). Inf inputs stay Inf where the format has Inf and become NaN otherwise (saturation applies to
// finite values only); formats without NaN map NaN to +max finite and Inf to ±max finite, as
// NVIDIA's FP6/FP4 conversions do.
template <Rounding R>
ALTGRAD_HD inline Rounded round_to_grid(const Format& f, std::uint32_t x, std::uint32_t random) {
  const std::uint32_t sign = x & kSignBit;
  const std::uint32_t a = x ^ sign;
  return detail::finish_rounding<R>(f, a, sign, detail::extended_grid_magnitude<R>(f, a, sign, random));
}

// Formats for which round_nearest_even_simple() applies: signed, with zero and subnormals, and a
// smallest normal that float32 holds as a normal (every format but e8m0-like ones).
ALTGRAD_HD inline bool has_simple_grid(const Format& f) {
  return f.has_sign && f.has_zero && f.spec.subnormals && f.min_normal_exp >= 1 - kFloatBias;
}

// round_to_grid<nearest_even> for formats with has_simple_grid(), in a third of the operations:
// above min normal the step is a fixed number of float32 mantissa bits, so rounding is an integer
// add and mask on the bit pattern; below it, adding C = 2^(emin − M + 23) makes float32's own
// round-to-nearest-even land on multiples of the subnormal step in one correctly rounded addition.
// Tests check it against round_to_grid bit for bit.
ALTGRAD_HD inline Rounded round_nearest_even_simple(const Format& f, std::uint32_t x) {
  const int M = f.spec.mantissa_bits;
  const std::uint32_t sign = x & kSignBit;
  const std::uint32_t a = x ^ sign;
  const int dropped = kFloatMantissaBits - M;
  const std::uint32_t kept = a >> dropped;
  // Ties go to the even code: the kept bits' parity, or for M = 0 the code's exponent field, whose
  // parity differs from float32's by that of bias − 127.
  const std::uint32_t parity_offset = detail::select(M == 0, static_cast<std::uint32_t>(f.spec.bias + 1), 0u);
  const std::uint32_t lsb = (kept + parity_offset) & 1u;
  const std::uint32_t step_mask = (1u << dropped) - 1u;
  const std::uint32_t normal = (a + (step_mask >> 1) + lsb) & ~step_mask;
  const float c = exp2_exact(f.min_normal_exp - M + kFloatMantissaBits);
  const std::uint32_t subnormal = float_bits((bits_float(a) + c) - c);
  const std::uint32_t on_grid = detail::select(a < f.min_normal_bits, subnormal, normal);
  return detail::finish_rounding<Rounding::nearest_even>(f, a, sign, on_grid);
}

// round_to_grid<stochastic> for formats with has_simple_grid(), in fewer operations: above min
// normal the dropped float32 bits are the remainder; below it, |x| is scaled to units of the
// subnormal step, where the integer and fractional parts come from exact conversions. The fraction
// is taken to 32 bits by truncation, as in round_to_grid. Tests check the two bit for bit.
ALTGRAD_HD inline Rounded round_stochastic_simple(const Format& f, std::uint32_t x, std::uint32_t random) {
  const int M = f.spec.mantissa_bits;
  const std::uint32_t sign = x & kSignBit;
  const std::uint32_t a = x ^ sign;
  const int dropped = kFloatMantissaBits - M;
  const std::uint32_t step_mask = (1u << dropped) - 1u;
  const std::uint32_t normal_up = random < ((a & step_mask) << (32 - dropped)) ? 1u : 0u;
  const std::uint32_t normal = (a & ~step_mask) + (normal_up << dropped);

  // Below min normal: y = |x| / 2^(emin − M) < 2^M, scaled in two exact steps (2^(M − emin) can
  // exceed float32's range, as for bf16).
  const int to_steps = M - f.min_normal_exp;
  const int first = to_steps < 100 ? to_steps : 100;
  const float y = bits_float(a) * exp2_exact(first) * exp2_exact(to_steps - first);
  const auto whole = static_cast<std::uint32_t>(static_cast<std::int32_t>(y));
  const float fraction = y - static_cast<float>(static_cast<std::int32_t>(whole));  // exact
  // floor(fraction · 2^32) in two exact 16-bit halves (one conversion would need an unsigned one).
  const float high_part = fraction * 65536.0f;
  const auto high = static_cast<std::uint32_t>(static_cast<std::int32_t>(high_part));
  const auto low = static_cast<std::uint32_t>(
      static_cast<std::int32_t>((high_part - static_cast<float>(static_cast<std::int32_t>(high))) * 65536.0f));
  const std::uint32_t sub_up = random < ((high << 16) | low) ? 1u : 0u;
  const std::uint32_t sub_steps = whole + sub_up;
  const std::uint32_t subnormal =
      float_bits(static_cast<float>(static_cast<std::int32_t>(sub_steps)) * exp2_exact(f.min_normal_exp - M));

  const std::uint32_t on_grid = detail::select(a < f.min_normal_bits, subnormal, normal);
  return detail::finish_rounding<Rounding::stochastic>(f, a, sign, on_grid);
}

template <Rounding R>
ALTGRAD_HD inline std::uint32_t round_bits(const Format& f, std::uint32_t x, std::uint32_t random,
                                           RoundFlags& flags) {
  const Rounded rounded = round_to_grid<R>(f, x, random);
  flags.overflow = rounded.overflow != 0;
  flags.underflow = rounded.underflow != 0;
  return rounded.bits;
}

// Runtime-dispatched form, for code that is not in a hot loop.
ALTGRAD_HD inline std::uint32_t round_bits(const Format& f, Rounding mode, std::uint32_t x,
                                           std::uint32_t random, RoundFlags& flags) {
  switch (mode) {
    case Rounding::nearest_even: return round_bits<Rounding::nearest_even>(f, x, random, flags);
    case Rounding::nearest_away: return round_bits<Rounding::nearest_away>(f, x, random, flags);
    case Rounding::toward_zero: return round_bits<Rounding::toward_zero>(f, x, random, flags);
    case Rounding::toward_positive: return round_bits<Rounding::toward_positive>(f, x, random, flags);
    case Rounding::toward_negative: return round_bits<Rounding::toward_negative>(f, x, random, flags);
    case Rounding::odd: return round_bits<Rounding::odd>(f, x, random, flags);
    case Rounding::stochastic: return round_bits<Rounding::stochastic>(f, x, random, flags);
    case Rounding::stochastic_equal: return round_bits<Rounding::stochastic_equal>(f, x, random, flags);
  }
  return kFloatQuietNanBits;
}

ALTGRAD_HD inline float round_value(const Format& f, Rounding mode, float x, std::uint32_t random = 0) {
  RoundFlags flags;
  return bits_float(round_bits(f, mode, float_bits(x), random, flags));
}

// Code classification.
ALTGRAD_HD inline std::uint32_t inf_magnitude(const Format& f) {
  return ((1u << f.spec.exponent_bits) - 1u) << f.spec.mantissa_bits;
}

ALTGRAD_HD inline bool is_nan_code(const Format& f, std::uint32_t code) {
  const std::uint32_t mag = code & f.magnitude_mask();
  switch (f.spec.policy) {
    case SpecialPolicy::ieee: return mag > inf_magnitude(f);
    case SpecialPolicy::fn:
    case SpecialPolicy::fnu: return mag == f.magnitude_mask();
    case SpecialPolicy::fnuz: return code == f.sign_code;
    case SpecialPolicy::finite: return false;
  }
  return false;
}

ALTGRAD_HD inline bool is_inf_code(const Format& f, std::uint32_t code) {
  return f.has_inf && (code & f.magnitude_mask()) == inf_magnitude(f);
}

// A code whose exponent field is zero but whose mantissa is not, in a format run without subnormals.
ALTGRAD_HD inline bool is_disabled_subnormal(const Format& f, std::uint32_t code) {
  const std::uint32_t mag = code & f.magnitude_mask();
  return !f.spec.subnormals && f.min_normal_field == 1 && mag != 0 &&
         (mag >> f.spec.mantissa_bits) == 0;
}

// Code -> float32. Subnormal codes of a format run without subnormals read as ±0.
ALTGRAD_HD inline float decode(const Format& f, std::uint32_t code) {
  if (is_nan_code(f, code)) return bits_float(kFloatQuietNanBits);
  const std::uint32_t sign = (code & f.sign_code) ? kSignBit : 0u;
  if (is_inf_code(f, code)) return bits_float(sign | kFloatInfBits);
  const std::uint32_t mag = code & f.magnitude_mask();
  const std::uint32_t bits =
      is_disabled_subnormal(f, code) ? 0u : magnitude_value_bits(f.spec, f.min_normal_field, mag);
  return bits_float(sign | bits);
}

// The code of a value on the grid (a result of round_bits).
ALTGRAD_HD inline std::uint32_t code_of_grid_value(const Format& f, std::uint32_t bits) {
  const std::uint32_t sign_code = (bits & kSignBit) && f.has_sign ? f.sign_code : 0u;
  const std::uint32_t a = bits & ~kSignBit;
  if (a > kFloatInfBits) return f.nan_code;
  if (a == kFloatInfBits) return sign_code | inf_magnitude(f);
  if (a == 0) return f.has_negative_zero ? sign_code : 0u;
  const int M = f.spec.mantissa_bits;
  const int e = static_cast<int>(a >> kFloatMantissaBits);
  const int ef = e > 0 ? e : 1;
  const std::uint32_t m = (a & 0x7F'FFFFu) | (e > 0 ? 0x80'0000u : 0u);
  const int lead = detail::floor_log2_bits(a);
  if (lead >= f.min_normal_exp) {
    const std::uint32_t field = static_cast<std::uint32_t>(lead + f.spec.bias);
    const std::uint32_t fraction = (m >> (lead - M + 150 - ef)) - (1u << M);
    return sign_code | (field << M) | fraction;
  }
  return sign_code | (m >> (f.min_normal_exp - M + 150 - ef));  // subnormal: field 0
}

// code_of_grid_value for a finite grid value of a format with has_simple_grid() whose subnormal
// step float32 holds as a normal (all but bf16-like ranges: has_simple_code), without branches, so
// that a loop over values vectorizes: above min normal the exponent and top mantissa bits are the
// code's; below it the value counts subnormal steps, which float32 multiplies out exactly.
ALTGRAD_HD inline bool has_simple_code(const Format& f) {
  return has_simple_grid(f) && f.min_normal_exp - f.spec.mantissa_bits >= 1 - kFloatBias;
}

ALTGRAD_HD inline std::uint32_t code_of_simple_grid_value(const Format& f, std::uint32_t bits) {
  const int M = f.spec.mantissa_bits;
  const std::uint32_t a = bits & ~kSignBit;
  const std::uint32_t field = static_cast<std::uint32_t>(static_cast<int>(a >> kFloatMantissaBits) - kFloatBias + f.spec.bias);
  const std::uint32_t normal = (field << M) | ((a & 0x7F'FFFFu) >> (kFloatMantissaBits - M));
  const std::uint32_t subnormal =
      static_cast<std::uint32_t>(bits_float(a) * exp2_exact(M - f.min_normal_exp));
  const std::uint32_t sign = (0u - (bits >> 31)) & f.sign_code;
  return sign | detail::select(a >= f.min_normal_bits, normal, subnormal);
}

template <Rounding R>
ALTGRAD_HD inline std::uint32_t encode(const Format& f, float x, std::uint32_t random = 0) {
  RoundFlags flags;
  return code_of_grid_value(f, round_bits<R>(f, float_bits(x), random, flags));
}

ALTGRAD_HD inline std::uint32_t encode(const Format& f, Rounding mode, float x, std::uint32_t random = 0) {
  RoundFlags flags;
  return code_of_grid_value(f, round_bits(f, mode, float_bits(x), random, flags));
}

}  // namespace altgrad::format
