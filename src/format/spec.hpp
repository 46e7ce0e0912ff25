#pragma once
// A small floating-point format: sign + E exponent bits + M mantissa bits, a bias, and a policy for
// special values. `FormatSpec` holds the knobs a researcher sets; `Format` adds the grid constants
// the codec needs, derived once. See docs/formats.md for the semantics of every field.
#include <cstdint>

#include "format/bits.hpp"
#include "format/host_device.hpp"

namespace altgrad::format {

enum class SpecialPolicy : std::uint8_t {
  ieee,    // top exponent field: Inf (mantissa 0) and NaN (mantissa != 0)
  fn,      // no Inf; only the all-ones magnitude is NaN (OCP E4M3)
  fnuz,    // no Inf, no -0; the code 100..0 is the only NaN (bias one higher by default)
  finite,  // no Inf, no NaN: every code is a number (OCP MX FP6 / FP4)
  fnu,     // unsigned exponent-only: no sign, no zero, all-ones is NaN (E8M0 scales)
};

// What happens to a finite value that rounds beyond max finite.
enum class Overflow : std::uint8_t {
  saturate,  // clamp to ±max finite
  special,   // Inf where the format has it, otherwise NaN (IEEE 754 §7.4 for directed modes)
};

struct FormatSpec {
  int exponent_bits = 4;
  int mantissa_bits = 3;
  int bias = 7;
  SpecialPolicy policy = SpecialPolicy::fn;
  bool subnormals = true;
  Overflow overflow = Overflow::saturate;

  friend constexpr bool operator==(const FormatSpec&, const FormatSpec&) = default;
};

// The bias a policy implies when none is given: 2^(E-1) - 1, one higher for fnuz.
ALTGRAD_HD constexpr int default_bias(int exponent_bits, SpecialPolicy policy) {
  return (1 << (exponent_bits - 1)) - (policy == SpecialPolicy::fnuz ? 0 : 1);
}

// FormatSpec plus derived grid constants. Build with make_format() after validate() accepted the spec.
struct Format {
  FormatSpec spec;
  bool has_sign = true;
  bool has_inf = false;
  bool has_nan = true;
  bool has_negative_zero = true;
  bool has_zero = true;
  int width = 8;                       // bits per code
  std::uint32_t sign_code = 0x80;      // the sign bit within a code (0 when unsigned)
  std::uint32_t max_magnitude = 0;     // largest finite code magnitude
  std::uint32_t min_normal_field = 1;  // exponent field of the smallest normal (0 for fnu)
  int min_normal_exp = 0;              // unbiased exponent of the smallest normal
  std::uint32_t nan_code = 0;          // the canonical NaN that encode produces
  std::uint32_t max_finite_bits = 0;   // float32 bits of max finite
  std::uint32_t min_positive_bits = 0; // float32 bits of the smallest positive value
  std::uint32_t min_normal_bits = 0;   // float32 bits of the smallest normal value

  ALTGRAD_HD float max_finite() const { return bits_float(max_finite_bits); }
  ALTGRAD_HD float min_normal() const { return bits_float(min_normal_bits); }
  ALTGRAD_HD float min_positive() const { return bits_float(min_positive_bits); }
  ALTGRAD_HD std::uint32_t magnitude_mask() const { return (1u << (width - (has_sign ? 1 : 0))) - 1u; }
  ALTGRAD_HD std::uint32_t code_count() const { return 1u << width; }
};

// float32 bits of significand `m` (implicit bit at position 23) times 2^exp; exact for every value
// a validated format holds, including float32 subnormals (bf16's and E8M0's smallest values).
ALTGRAD_HD constexpr std::uint32_t pack_float_bits(std::uint32_t m, int exp) {
  if (exp >= 1 - kFloatBias) {
    return (static_cast<std::uint32_t>(exp + kFloatBias) << kFloatMantissaBits) | (m & 0x7F'FFFFu);
  }
  return m >> (1 - kFloatBias - exp);
}

// Value of a finite code magnitude, as float32 bits.
ALTGRAD_HD constexpr std::uint32_t magnitude_value_bits(const FormatSpec& s, std::uint32_t field_min,
                                                        std::uint32_t magnitude) {
  const int M = s.mantissa_bits;
  const std::uint32_t field = magnitude >> M;
  const std::uint32_t fraction = magnitude & ((1u << M) - 1u);
  if (field >= field_min) {
    const std::uint32_t m = (1u << kFloatMantissaBits) | (fraction << (kFloatMantissaBits - M));
    return pack_float_bits(m, static_cast<int>(field) - s.bias);
  }
  if (fraction == 0) return 0;
  // Subnormal: fraction * 2^(1 - bias - M); normalise the fraction to put its top bit at 23.
  int top = 31;
  while (!(fraction >> top)) --top;
  return pack_float_bits(fraction << (kFloatMantissaBits - top), 1 - s.bias - M + top);
}

ALTGRAD_HD constexpr Format make_format(const FormatSpec& s) {
  Format f{};
  f.spec = s;
  const int E = s.exponent_bits, M = s.mantissa_bits;
  const std::uint32_t all_ones = (1u << (E + M)) - 1u;
  f.has_sign = s.policy != SpecialPolicy::fnu;
  f.has_inf = s.policy == SpecialPolicy::ieee;
  f.has_nan = s.policy != SpecialPolicy::finite;
  f.has_zero = s.policy != SpecialPolicy::fnu;
  f.has_negative_zero = f.has_sign && s.policy != SpecialPolicy::fnuz;
  f.width = E + M + (f.has_sign ? 1 : 0);
  f.sign_code = f.has_sign ? (1u << (E + M)) : 0u;
  f.min_normal_field = s.policy == SpecialPolicy::fnu ? 0u : 1u;
  f.min_normal_exp = static_cast<int>(f.min_normal_field) - s.bias;
  switch (s.policy) {
    case SpecialPolicy::ieee:
      f.max_magnitude = (((1u << E) - 1u) << M) - 1u;
      f.nan_code = (((1u << E) - 1u) << M) | (1u << (M - 1));  // quiet NaN, positive
      break;
    case SpecialPolicy::fn:
    case SpecialPolicy::fnu:
      f.max_magnitude = all_ones - 1u;
      f.nan_code = all_ones;
      break;
    case SpecialPolicy::fnuz:
      f.max_magnitude = all_ones;
      f.nan_code = f.sign_code;
      break;
    case SpecialPolicy::finite:
      f.max_magnitude = all_ones;
      f.nan_code = 0;  // unused: the format has no NaN
      break;
  }
  f.max_finite_bits = magnitude_value_bits(s, f.min_normal_field, f.max_magnitude);
  f.min_normal_bits = magnitude_value_bits(s, f.min_normal_field, f.min_normal_field << M);
  const bool first_code_is_value = s.policy == SpecialPolicy::fnu || !s.subnormals || M == 0;
  f.min_positive_bits = first_code_is_value ? f.min_normal_bits
                                            : magnitude_value_bits(s, f.min_normal_field, 1u);
  return f;
}

}  // namespace altgrad::format
