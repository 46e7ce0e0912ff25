#pragma once
// Bit views of float32. Rounding is done on integer bit patterns (exact at every edge) rather than
// with floating-point tricks that depend on the FPU's mode.
#include <cstdint>
#include <bit>

#include "format/host_device.hpp"

namespace altgrad::format {

inline constexpr std::uint32_t kSignBit = 0x8000'0000u;
inline constexpr std::uint32_t kFloatInfBits = 0x7F80'0000u;
inline constexpr std::uint32_t kFloatQuietNanBits = 0x7FC0'0000u;
inline constexpr int kFloatMantissaBits = 23;
inline constexpr std::uint32_t kFloatFractionMask = (1u << kFloatMantissaBits) - 1u;
inline constexpr int kFloatBias = 127;

ALTGRAD_HD constexpr std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  return std::bit_cast<std::uint32_t>(x);
#endif
}

ALTGRAD_HD constexpr float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  return std::bit_cast<float>(u);
#endif
}

// 2^k as a float for k in [-149, 127] (subnormal powers included).
ALTGRAD_HD inline float exp2_exact(int k) {
  return k >= -126 ? bits_float(static_cast<std::uint32_t>(k + kFloatBias) << kFloatMantissaBits)
                   : bits_float(1u << (k + 149));
}

}  // namespace altgrad::format
