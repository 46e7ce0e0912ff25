#pragma once
// Grid arithmetic written from docs/formats.md, independent of src/: the value set of a format is
// described by M, the smallest normal exponent and max finite, and rounding is done in long double
// (every float and every grid value is exact there). The quantizer tests use these to decide
// overflow, underflow, grid neighbours and scales without asking the code under test.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "format/spec.hpp"

namespace altgrad::quant_test {

// Grid constants transcribed from the "Named formats" table (bias → min normal exponent 1 − bias).
struct RefGrid {
  const char* name;     // as parse_format spells it
  int mantissa_bits;    // M
  int min_normal_exp;   // emin = 1 − bias
  long double max_finite;
  bool subnormals = true;
};

inline constexpr RefGrid kE4m3{"e4m3", 3, -6, 448.0L};
inline constexpr RefGrid kE4m3Inf{"e4m3,overflow=inf", 3, -6, 448.0L};
inline constexpr RefGrid kE4m3fnuz{"e4m3fnuz", 3, -7, 240.0L};
inline constexpr RefGrid kE5m2{"e5m2", 2, -14, 57344.0L};
inline constexpr RefGrid kE5m2Inf{"e5m2,overflow=inf", 2, -14, 57344.0L};
inline constexpr RefGrid kE5m2NoSubnormals{"e5m2,subnormals=off", 2, -14, 57344.0L, false};
inline constexpr RefGrid kE3m2{"e3m2", 2, -2, 28.0L};
inline constexpr RefGrid kE2m3{"e2m3", 3, 0, 7.5L};
inline constexpr RefGrid kE2m1{"e2m1", 1, 0, 6.0L};
inline constexpr RefGrid kBf16{"bf16", 7, -126, 0x1.fep127L};

inline format::Format load(const RefGrid& g) { return format::make_format(format::parse_format(g.name)); }
inline format::Format load(const char* name) { return format::make_format(format::parse_format(name)); }

// floor(log2 a) for finite a > 0, read off frexp (a = m·2^e with m in [0.5, 1)).
inline int floor_log2(long double a) {
  int e = 0;
  std::frexp(a, &e);
  return e - 1;
}

inline long double min_positive(const RefGrid& g) {
  return std::ldexp(1.0L, g.min_normal_exp - (g.subnormals ? g.mantissa_bits : 0));
}

// The grid step at magnitude a on the extended grid (exponent range unbounded above).
inline long double step_at(const RefGrid& g, long double a) {
  if (a >= std::ldexp(1.0L, g.min_normal_exp)) return std::ldexp(1.0L, floor_log2(a) - g.mantissa_bits);
  return min_positive(g);  // subnormal step, or the gap 0 → min normal with subnormals off
}

// The grid magnitudes around a ≥ 0: lo ≤ a ≤ hi, lo == hi exactly when a is on the grid.
struct Bracket {
  long double lo;
  long double hi;
};

inline Bracket bracket(const RefGrid& g, long double a) {
  const long double step = step_at(g, a);
  const long double lo = std::floor(a / step) * step;
  return {lo, lo == a ? a : lo + step};
}

// Nearest-even on the extended grid: a tie goes to the neighbour whose index lo/step is even,
// which is the even code for M ≥ 1 (and zero, for the tie below min normal with subnormals off).
inline long double round_nearest_even(const RefGrid& g, long double a) {
  const Bracket b = bracket(g, a);
  if (b.lo == b.hi) return b.lo;
  const long double below = a - b.lo, above = b.hi - a;
  if (below != above) return below < above ? b.lo : b.hi;
  const long double index = b.lo / (b.hi - b.lo);
  return std::fmod(index, 2.0L) == 0.0L ? b.lo : b.hi;
}

// "A finite value overflows when its rounding on the extended grid exceeds max finite."
inline bool overflows_nearest_even(const RefGrid& g, long double a) {
  return round_nearest_even(g, a) > g.max_finite;
}

// The per-tensor scale of docs/formats.md: max_finite / (amax · 2^margin), rounded once to FP32,
// clamped to FLT_MAX; `previous` for a zero or non-finite amax. The quotient is formed in long
// double (64-bit significand) and rounded to float: double rounding through p ≥ 2·24 + 2 bits is
// innocuous for a quotient of two floats with a normal result, so this is the correctly rounded one.
inline float reference_scale(long double max_finite, float amax, int margin, float previous = 1.0f) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return previous;
  const long double q = max_finite / std::ldexp(static_cast<long double>(amax), margin);
  const long double flt_max = std::numeric_limits<float>::max();
  return static_cast<float>(q > flt_max ? flt_max : q);
}

// A block's scale reads max |x| over its finite elements in[begin, end): 0 when there are none.
inline float reference_block_amax(const std::vector<float>& in, std::size_t begin, std::size_t end) {
  float amax = 0.0f;
  for (std::size_t i = begin; i < end; ++i) {
    if (std::isfinite(in[i])) amax = std::max(amax, std::fabs(in[i]));
  }
  return amax;
}

}  // namespace altgrad::quant_test
