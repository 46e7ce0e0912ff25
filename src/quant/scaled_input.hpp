#pragma once
// The value a quantizer rounds: the FP32 product x·scale, with the product's own range events.
// A finite x whose product overflows FP32 enters rounding as ±FLT_MAX, so it overflows the format
// under every rule (and saturates or not as the format says) rather than turning into an Inf input;
// a nonzero x whose product underflows to zero counts as an underflow.
#include <cstdint>

#include "format/bits.hpp"
#include "format/host_device.hpp"

namespace altgrad::quant {

struct ScaledInput {
  std::uint32_t bits;       // float32 bits to round
  std::uint32_t overflow;   // 0/1: the product left FP32's range
  std::uint32_t underflow;  // 0/1: a nonzero x became zero in the product
};

// 0/1 integers and mask selects throughout: this sits inside the quantizer's vectorized loops. Host
// and device: the GPU quantizer (quant/cuda/) calls it too.
ALTGRAD_HD inline ScaledInput scale_input(float x, float scale) {
  constexpr std::uint32_t kFloatMaxBits = 0x7F7F'FFFFu;
  const std::uint32_t product = format::float_bits(x * scale);
  const std::uint32_t x_magnitude = format::float_bits(x) & ~format::kSignBit;
  const std::uint32_t magnitude = product & ~format::kSignBit;
  const std::uint32_t overflow = (x_magnitude < format::kFloatInfBits ? 1u : 0u) &
                                 (magnitude == format::kFloatInfBits ? 1u : 0u);
  const std::uint32_t underflow = (x_magnitude != 0 ? 1u : 0u) & (magnitude == 0 ? 1u : 0u);
  const std::uint32_t clamped = (product & format::kSignBit) | kFloatMaxBits;
  const std::uint32_t mask = 0u - overflow;
  return {(clamped & mask) | (product & ~mask), overflow, underflow};
}

// Whether the rounded value can go back through the scale's reciprocal: exact for a power of two
// whose reciprocal is a normal float32 (the same correctly rounded result as dividing, cheaper).
ALTGRAD_HD inline bool is_power_of_two_scale(float s) {
  return (format::float_bits(s) & 0x7F'FFFFu) == 0 && s >= format::exp2_exact(-126) &&
         s <= format::exp2_exact(126);
}

}  // namespace altgrad::quant
