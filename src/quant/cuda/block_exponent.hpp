#pragma once
// MX's shared exponent of a block, on both devices: quant::mx_shared_exponent (quant/mx.hpp), whose
// source is host-only, for the GPU quantizer to compute each block's E8M0 scale where the block
// is. tests/quant/cuda_element_test.cpp holds it to the CPU's function for every named format and
// rule over amaxes of every binade (float32 subnormals included).
#include <cstdint>

#include "format/bits.hpp"
#include "format/codec.hpp"
#include "format/host_device.hpp"
#include "format/spec.hpp"
#include "quant/mx.hpp"

namespace altgrad::quant::cuda {

// E8M0 (OCP MX): code = k + 127 for k in [−127, 127]; 255 is NaN, which no block gets.
inline constexpr int kE8m0Bias = 127;

// The significand of a positive finite float's bits, with its leading one at bit 23: a normal's
// implicit bit added, a subnormal's shifted up.
ALTGRAD_HD inline std::uint32_t normalized_significand(std::uint32_t a) {
  constexpr std::uint32_t kImplicitBit = 1u << format::kFloatMantissaBits;
  if (a >= kImplicitBit) return (a & (kImplicitBit - 1u)) | kImplicitBit;
  // A subnormal's leading one is bit lead + 149 of a.
  return a << (format::kFloatMantissaBits - (format::detail::floor_log2_bits(a) + 149));
}

// Shared exponent k (block scale 2^k, elements stored as x · 2^−k) for a block's largest finite
// |x|, clamped to E8M0's range; a zero or non-finite amax gives k = 0. floor: k = floor(log2 amax)
// − floor(log2 max finite). round_up adds one where amax · 2^−k > max finite: both sides then lie
// in max finite's binade, so the test compares their significands, exactly (the CPU compares the
// same two numbers in double, also exactly). ceil adds one where amax is not a power of two, even
// where amax's significand is at least 2 − 2^−(m+1), m the element's mantissa bits.
ALTGRAD_HD inline int block_shared_exponent(const format::Format& element, float amax, MxScaleRule rule) {
  const std::uint32_t a = format::float_bits(amax);
  if (!(amax > 0.0f) || a >= format::kFloatInfBits) return 0;
  int k = format::detail::floor_log2_bits(a) - format::detail::floor_log2_bits(element.max_finite_bits);
  const std::uint32_t significand = normalized_significand(a);
  constexpr std::uint32_t kOne = 1u << format::kFloatMantissaBits;
  if (rule == MxScaleRule::round_up && significand > normalized_significand(element.max_finite_bits)) ++k;
  if (rule == MxScaleRule::ceil && significand > kOne) ++k;
  if (rule == MxScaleRule::even &&
      significand >= 2 * kOne - (1u << (format::kFloatMantissaBits - 1 - element.spec.mantissa_bits))) {
    ++k;
  }
  return k < -kE8m0Bias ? -kE8m0Bias : (k > kE8m0Bias ? kE8m0Bias : k);
}

}  // namespace altgrad::quant::cuda
