#pragma once
// The reference rounding of one float32 onto a format, from docs/formats.md ("Rounding",
// "Subnormals off", "Overflow and special inputs"): the neighbours of x on the sorted rounding grid
// are compared in long double and the mode picks one; overflow and special inputs follow the spec's
// tables. Deterministic modes only: the stochastic ones are tested statistically.
#include <cstdint>

#include "format/rounding.hpp"
#include "reference_grid.hpp"

namespace altgrad::format_ref {

struct RefResult {
  std::uint32_t code = 0;
  long double value = 0;   // signed; ±inf; NaN for NaN results
  bool overflow = false;   // the rounding on the extended grid exceeded max finite
  bool underflow = false;  // a nonzero input rounded to zero (below the smallest positive value)
};

RefResult reference_round(const ReferenceGrid& grid, format::Rounding mode, float x, const Bracket& bracket);
// Finds the bracket by binary search.
RefResult reference_round(const ReferenceGrid& grid, format::Rounding mode, float x);

// The float32 bits round_bits() must return for a result: NaN is the positive quiet NaN.
std::uint32_t expected_float_bits(const RefResult& result);

}  // namespace altgrad::format_ref
