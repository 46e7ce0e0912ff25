#pragma once
// Rounding modes. Every mode is defined relative to the format's value set on an extended grid
// (exponent range unbounded above), so overflow is decided after rounding; see docs/formats.md.
#include <cstdint>

namespace altgrad::format {

enum class Rounding : std::uint8_t {
  nearest_even,      // ties to the even code
  nearest_away,      // ties away from zero
  toward_zero,
  toward_positive,   // "up"
  toward_negative,   // "down"
  odd,               // inexact results take the neighbour with an odd code (exact double rounding)
  stochastic,        // up with probability (x - lo) / (hi - lo), resolved to 2^-32
  stochastic_equal,  // up with probability 1/2 whenever x is not on the grid
};

inline constexpr Rounding kAllRoundings[] = {
    Rounding::nearest_even,    Rounding::nearest_away, Rounding::toward_zero,
    Rounding::toward_positive, Rounding::toward_negative, Rounding::odd,
    Rounding::stochastic,      Rounding::stochastic_equal,
};

constexpr bool is_stochastic(Rounding r) {
  return r == Rounding::stochastic || r == Rounding::stochastic_equal;
}

}  // namespace altgrad::format
