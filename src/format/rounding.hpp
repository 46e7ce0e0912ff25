#pragma once
// Rounding modes. Every mode is defined relative to the format's value set on an extended grid
// (exponent range unbounded above), so overflow is decided after rounding; see docs/formats.md.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

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

// The names the command line and configs use, in enum order.
inline constexpr std::array<std::string_view, 8> kRoundingNames = {
    "nearest", "away", "zero", "up", "down", "odd", "stochastic", "stochastic-equal",
};

constexpr std::string_view rounding_name(Rounding r) { return kRoundingNames[static_cast<std::size_t>(r)]; }

constexpr std::optional<Rounding> parse_rounding(std::string_view name) {
  for (std::size_t i = 0; i < kRoundingNames.size(); ++i) {
    if (kRoundingNames[i] == name) return static_cast<Rounding>(i);
  }
  return std::nullopt;
}

}  // namespace altgrad::format
