#include "reference_rounding.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace altgrad::format_ref {
namespace {

using format::Overflow;
using format::Rounding;

constexpr long double kNaN = std::numeric_limits<long double>::quiet_NaN();
constexpr long double kInf = std::numeric_limits<long double>::infinity();

RefResult nan_result(const ReferenceGrid& grid) { return {*grid.canonical_nan_code(), kNaN, false, false}; }

RefResult max_finite_result(const ReferenceGrid& grid, bool negative) {
  const bool signed_result = negative && grid.is_signed();
  return {grid.max_finite_code() | (signed_result ? grid.sign_code() : 0u),
          signed_result ? -grid.max_finite() : grid.max_finite(), false, false};
}

// The special-input table: NaN, ±Inf.
RefResult non_finite_input(const ReferenceGrid& grid, float x) {
  const bool negative = std::signbit(x);
  if (std::isnan(x)) return grid.has_nan() ? nan_result(grid) : max_finite_result(grid, false);
  if (grid.has_inf()) return {*grid.inf_code(negative), negative ? -kInf : kInf, false, false};
  if (grid.has_nan()) return nan_result(grid);
  return max_finite_result(grid, negative);  // `finite`: ±max finite
}

// ±0 input: -0 stays -0 where the format has it; fnu has no zero and gives 2^-bias (code 0).
RefResult zero_input(const ReferenceGrid& grid, bool negative) {
  if (!grid.has_zero()) return {0u, grid.min_positive(), false, false};
  const bool keep_sign = negative && grid.has_negative_zero();
  return {keep_sign ? grid.sign_code() : 0u, keep_sign ? -0.0L : 0.0L, false, false};
}

// IEEE 754 §7.4 as the spec extends it: Inf (NaN without Inf) for the nearest modes and the directed
// mode pointing away from zero; max finite for toward-zero, odd and the mode pointing back.
bool overflows_to_special(const ReferenceGrid& grid, Rounding mode, bool negative) {
  if (grid.spec().overflow != Overflow::special || !grid.has_nan()) return false;
  switch (mode) {
    case Rounding::nearest_even:
    case Rounding::nearest_away:
    case Rounding::stochastic:
    case Rounding::stochastic_equal:
      return true;
    case Rounding::toward_positive:
      return !negative;
    case Rounding::toward_negative:
      return negative;
    case Rounding::toward_zero:
    case Rounding::odd:
      return false;
  }
  return false;
}

RefResult overflow_result(const ReferenceGrid& grid, Rounding mode, bool negative) {
  RefResult r = max_finite_result(grid, negative);
  if (overflows_to_special(grid, mode, negative)) {
    r = grid.has_inf() ? RefResult{*grid.inf_code(negative), negative ? -kInf : kInf, false, false}
                       : nan_result(grid);
  }
  r.overflow = true;
  return r;
}

// Which end of a gap is the odd one. Adjacent codes differ by one, so exactly one is odd, except
// across a gap with no codes in it: [0, min normal] with subnormals off (both codes even) and fnu's
// [clamp zero, 2^-bias]. There the gap is one step of the coarser grid: zero is its even end, as the
// spec's "the tie goes to zero" under subnormals off says, and the nonzero end is the odd one (so an
// inexact round-to-odd result never lands on zero, which every coarser grid holds).
bool upper_is_odd(const GridPoint& lo, const GridPoint& hi) {
  if (lo.odd != hi.odd) return hi.odd;
  if (lo.odd) throw std::logic_error("reference: two adjacent odd codes");
  return hi.value != 0;
}

const GridPoint& choose(Rounding mode, long double x, const GridPoint& lo, const GridPoint& hi) {
  if (lo.value == x) return lo;
  const bool hi_odd = upper_is_odd(lo, hi);
  const GridPoint& odd = hi_odd ? hi : lo;
  const GridPoint& even = hi_odd ? lo : hi;
  const GridPoint& smaller_magnitude = x > 0 ? lo : hi;
  const GridPoint& larger_magnitude = x > 0 ? hi : lo;
  const long double mid = (lo.value + hi.value) / 2;  // exact in long double
  switch (mode) {
    case Rounding::nearest_even:
      return x < mid ? lo : x > mid ? hi : even;
    case Rounding::nearest_away:
      return x < mid ? lo : x > mid ? hi : larger_magnitude;
    case Rounding::toward_zero:
      return smaller_magnitude;
    case Rounding::toward_positive:
      return hi;
    case Rounding::toward_negative:
      return lo;
    case Rounding::odd:
      return odd;
    case Rounding::stochastic:
    case Rounding::stochastic_equal:
      break;
  }
  throw std::logic_error("reference: stochastic modes have no deterministic reference");
}

RefResult finite_input(const ReferenceGrid& grid, Rounding mode, float x, const Bracket& bracket) {
  const bool negative = x < 0;
  if (bracket.outside) return overflow_result(grid, mode, negative);
  const auto& points = grid.rounding_points();
  const GridPoint& chosen = choose(mode, x, points[bracket.lo], points[bracket.hi]);
  if (chosen.beyond_max) return overflow_result(grid, mode, negative);
  if (chosen.value == 0) {
    RefResult r = zero_input(grid, negative);  // fnu: clamps to 2^-bias
    r.underflow = true;
    return r;
  }
  return {chosen.code, chosen.value, false, false};
}

}  // namespace

RefResult reference_round(const ReferenceGrid& grid, Rounding mode, float x, const Bracket& bracket) {
  if (!std::isfinite(x)) return non_finite_input(grid, x);
  if (x == 0) return zero_input(grid, std::signbit(x));
  if (x < 0 && !grid.is_signed()) return nan_result(grid);  // fnu has no sign
  return finite_input(grid, mode, x, bracket);
}

RefResult reference_round(const ReferenceGrid& grid, Rounding mode, float x) {
  const Bracket bracket = std::isfinite(x) ? bracket_by_search(grid, x) : Bracket{};
  return reference_round(grid, mode, x, bracket);
}

std::uint32_t expected_float_bits(const RefResult& result) {
  if (std::isnan(result.value)) return 0x7FC0'0000u;
  const float f = static_cast<float>(result.value);
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

}  // namespace altgrad::format_ref
