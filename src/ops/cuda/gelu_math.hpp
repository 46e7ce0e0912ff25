#pragma once
// GELU in float, element by element, with the bits of the CPU's float kernel (ops/cpu/gelu.cpp):
// Φ by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7) over exp_float, the same operations in the
// same order.
//   gelu(x) = x · Φ(x),   gelu'(x) = Φ(x) + x · φ(x),   φ(x) = e^(−x²/2) / √(2π)
#include <cmath>

#include "ops/cuda/float_exp.hpp"
#include "ops/cuda/host_device.hpp"

namespace altgrad::ops::cuda {

// 1/√2 and 1/√(2π) as ops/cpu/gelu.cpp rounds them (each factor to float, then the float quotient),
// written out bit for bit so that no compiler's constant folding can round them otherwise;
// tests/ops/cuda_math_test.cpp checks them against the CPU's expressions.
inline constexpr float kGeluInvSqrt2 = 0x1.6a09e6p-1f;
inline constexpr float kGeluInvSqrt2Pi = 0x1.988456p-2f;

// Φ(x) given gauss = e^(−x²/2): erf(|x|/√2) = 1 − poly(t)·gauss, t = 1/(1 + p·|x|/√2).
ALTGRAD_OPS_HD inline float gelu_normal_cdf(float x, float gauss) {
  const float z = fabsf(x) * kGeluInvSqrt2;
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  const float poly =
      t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float erf_abs = 1.0f - poly * gauss;
  return 0.5f * (1.0f + (x < 0.0f ? -erf_abs : erf_abs));
}

ALTGRAD_OPS_HD inline float gelu_value(float x) { return x * gelu_normal_cdf(x, exp_float(-0.5f * x * x)); }

// dout · gelu'(x); the exponential is shared by Φ and the density φ.
ALTGRAD_OPS_HD inline float gelu_gradient(float x, float dout) {
  const float gauss = exp_float(-0.5f * x * x);
  return dout * (gelu_normal_cdf(x, gauss) + x * kGeluInvSqrt2Pi * gauss);
}

}  // namespace altgrad::ops::cuda
