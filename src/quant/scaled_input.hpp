#pragma once
// The value a quantizer rounds: the FP32 product x·scale, with the product's own range events.
// A finite x whose product overflows FP32 enters rounding as ±FLT_MAX, so it overflows the format
// under every rule (and saturates or not as the format says) rather than turning into an Inf input;
// a nonzero x whose product underflows to zero counts as an underflow.
#include <cstdint>

#include "format/bits.hpp"

namespace altgrad::quant {

struct ScaledInput {
  std::uint32_t bits;       // float32 bits to round
  std::uint32_t overflow;   // 0/1: the product left FP32's range
  std::uint32_t underflow;  // 0/1: a nonzero x became zero in the product
};

inline ScaledInput scale_input(float x, float scale) {
  constexpr std::uint32_t kFloatMaxBits = 0x7F7F'FFFFu;
  const std::uint32_t x_bits = format::float_bits(x);
  const std::uint32_t product = format::float_bits(x * scale);
  const std::uint32_t x_magnitude = x_bits & ~format::kSignBit;
  const std::uint32_t magnitude = product & ~format::kSignBit;
  const std::uint32_t overflow = (x_magnitude < format::kFloatInfBits) & (magnitude == format::kFloatInfBits);
  const std::uint32_t underflow = (x_magnitude != 0) & (magnitude == 0);
  const std::uint32_t bits = overflow ? ((product & format::kSignBit) | kFloatMaxBits) : product;
  return {bits, overflow, underflow};
}

}  // namespace altgrad::quant
