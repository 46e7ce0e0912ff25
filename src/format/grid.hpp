#pragma once
// Facts about a format's grid and moves along it: neighbouring codes, the spacing at a value (the
// "stiffness" S(x) of bit-space optimizers), and whole-format enumeration.
#include <cstdint>
#include <optional>

#include "format/codec.hpp"
#include "format/host_device.hpp"
#include "format/spec.hpp"

namespace altgrad::format {

// Grid spacing at x: 2^(floor(log2|x|) - M) in the normal range, so at a power of two it is the
// step to the next code away from zero. Below the smallest normal it is the subnormal step
// 2^(emin - M), or the gap 2^emin between 0 and min normal when subnormals are off. Above max
// finite it stays at the top binade's step. NaN for NaN and Inf.
ALTGRAD_HD inline float spacing(const Format& f, float x) {
  const std::uint32_t a = float_bits(x) & ~kSignBit;
  if (a >= kFloatInfBits) return bits_float(kFloatQuietNanBits);
  const int M = f.spec.mantissa_bits;
  const int top = static_cast<int>(f.max_magnitude >> M) - f.spec.bias;
  int lead = detail::floor_log2_bits(a);
  lead = lead < top ? lead : top;
  if (lead >= f.min_normal_exp) return exp2_exact(lead - M);
  return exp2_exact(f.min_normal_exp - (f.spec.subnormals ? M : 0));
}

ALTGRAD_HD inline bool is_negative_code(const Format& f, std::uint32_t code) {
  return f.has_sign && (code & f.sign_code) != 0;
}

// The magnitude of the smallest positive value.
ALTGRAD_HD inline std::uint32_t first_positive_magnitude(const Format& f) {
  if (!f.has_zero) return 0;
  return (f.spec.subnormals && f.spec.mantissa_bits > 0) ? 1u : (f.min_normal_field << f.spec.mantissa_bits);
}

// The code of the next larger value (toward +Inf); nothing above +Inf, max finite without Inf, or NaN.
// Zero results are +0; a disabled subnormal code steps like the zero it reads as.
ALTGRAD_HD inline std::optional<std::uint32_t> next_code_up(const Format& f, std::uint32_t code) {
  if (is_nan_code(f, code)) return std::nullopt;
  if (is_disabled_subnormal(f, code)) code = 0;  // it reads as zero, so it steps like zero
  const std::uint32_t mag = code & f.magnitude_mask();
  if (is_negative_code(f, code) && mag != 0) {
    if (is_inf_code(f, code)) return f.sign_code | f.max_magnitude;
    const std::uint32_t smaller = mag - 1;
    if (smaller < first_positive_magnitude(f)) return 0u;
    return f.sign_code | smaller;
  }
  if (mag == 0 && f.has_zero) return first_positive_magnitude(f);
  if (mag >= f.max_magnitude) {
    if (mag == f.max_magnitude && f.has_inf) return inf_magnitude(f);
    return std::nullopt;
  }
  return mag + 1;
}

// The code of the next smaller value (toward -Inf); the mirror of next_code_up.
ALTGRAD_HD inline std::optional<std::uint32_t> next_code_down(const Format& f, std::uint32_t code) {
  if (is_nan_code(f, code)) return std::nullopt;
  if (is_disabled_subnormal(f, code)) code = 0;
  if (!f.has_sign) {
    if (code == 0) return std::nullopt;
    return code - 1;
  }
  const std::uint32_t mag = code & f.magnitude_mask();
  const std::uint32_t mirrored = mag == 0 ? 0u : (code ^ f.sign_code);
  const auto up = next_code_up(f, mirrored);
  if (!up) return std::nullopt;
  const std::uint32_t up_mag = *up & f.magnitude_mask();
  if (up_mag == 0) return f.has_negative_zero ? f.sign_code : 0u;
  return *up ^ f.sign_code;
}

// A code of the format's width that is not a disabled subnormal.
ALTGRAD_HD inline bool is_valid_code(const Format& f, std::uint32_t code) {
  if (code >= f.code_count()) return false;
  if (is_disabled_subnormal(f, code)) return false;
  return true;
}

struct GridFacts {
  double max_finite = 0;
  double min_normal = 0;
  double min_subnormal = 0;            // 0 when the format has no subnormals
  std::uint32_t finite_values = 0;     // distinct finite numbers, ±0 counted once
  std::uint32_t nan_codes = 0;
  bool has_inf = false;
};

// Counts by enumerating every code (at most 2^16), so the numbers never drift from decode().
inline GridFacts grid_facts(const Format& f) {
  GridFacts g;
  g.max_finite = f.max_finite();
  g.min_normal = f.min_normal();
  const bool has_subnormals = f.spec.subnormals && f.spec.mantissa_bits > 0 && f.has_zero;
  g.min_subnormal = has_subnormals ? static_cast<double>(f.min_positive()) : 0.0;
  g.has_inf = f.has_inf;
  bool zero_seen = false;
  for (std::uint32_t c = 0; c < f.code_count(); ++c) {
    if (is_nan_code(f, c)) {
      ++g.nan_codes;
      continue;
    }
    if (!is_valid_code(f, c) || is_inf_code(f, c)) continue;
    if (decode(f, c) == 0.0f) {
      if (zero_seen) continue;
      zero_seen = true;
    }
    ++g.finite_values;
  }
  return g;
}

}  // namespace altgrad::format
