#pragma once
// e^x in float with the bits of the CPU kernels' exp (ops/cpu/vector_math.hpp, exp_lanes): the
// same operations in the same order, for a host or a GPU thread. GELU and the softmax rows take
// their exponentials from it, so that they give the CPU's bits; libm's expf and CUDA's expf differ
// from it and from each other in the last place.
//
// Within 2 ulp for x in [-87.3, 88.3]; 0 below (a dead GELU unit's slope is an exact zero);
// clamped at 88.3 above; NaN gives NaN. Cody and Waite's reduction x = n·ln2 + r, |r| <= ln2/2,
// with n·ln2_hi exact; e^r by its Taylor series to degree 7; 2^n from the exponent bits.
#include <cstdint>

#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

#include "ops/cuda/host_device.hpp"

namespace altgrad::ops::cuda {

ALTGRAD_OPS_HD inline float float_from_bits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  return std::bit_cast<float>(bits);
#endif
}

ALTGRAD_OPS_HD inline std::uint32_t bits_of_float(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  return std::bit_cast<std::uint32_t>(x);
#endif
}

ALTGRAD_OPS_HD inline float exp_float(float x) {
  const bool underflows = x < -87.3f;
  x = x < -87.3f ? -87.3f : x;
  x = 88.3f < x ? 88.3f : x;
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860682030941723e-6f;
  constexpr float kRound = 12582912.0f;  // 1.5·2^23: adding and subtracting it rounds to an integer
  const float n = (x * kLog2e + kRound) - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  // The Taylor coefficients 1/7!, ..., 1/3! as float quotients, written out bit for bit (no compiler
  // may fold them otherwise).
  float p = 0x1.a01a02p-13f;
  p = 0x1.6c16c2p-10f + r * p;
  p = 0x1.111112p-7f + r * p;
  p = 0x1.555556p-5f + r * p;
  p = 0x1.555556p-3f + r * p;
  p = 0.5f + r * p;
  p = 1.0f + r * p;
  p = 1.0f + r * p;
  // n + 127 lies in [1, 255) for the clamped range, a normal float's exponent field. A NaN n takes
  // n = 0 here (converting it is undefined in C++); p is NaN then, and so is the result.
  const std::int32_t whole = n == n ? static_cast<std::int32_t>(n) : 0;
  const std::uint32_t power = static_cast<std::uint32_t>(whole + 127) << 23;
  return underflows ? 0.0f : p * float_from_bits(power);
}

}  // namespace altgrad::ops::cuda
