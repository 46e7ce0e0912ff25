#pragma once
// SwiGLU, element by element, as the CPU's kernel computes it (ops/cpu/swiglu.cpp):
//   out = silu(a) · b,   silu(a) = a · sigmoid(a),   sigmoid(a) = 1 / (1 + e^(−a))
// The exponential is expf, libm's on the host (the CPU kernel's std::exp, so the host gives its
// bits) and CUDA's on the GPU, which is within 2 ulp of it: only there may the GPU's bits differ.
#include <cmath>

#include "ops/cuda/host_device.hpp"

namespace altgrad::ops::cuda {

// e^(−a) overflows to Inf for very negative a, which gives 0, not NaN.
ALTGRAD_OPS_HD inline float swiglu_sigmoid(float a) { return 1.0f / (1.0f + expf(-a)); }

ALTGRAD_OPS_HD inline float swiglu_value(float a, float b) { return a * swiglu_sigmoid(a) * b; }

// The gradients of one (a, b) pair: da = dout · b · silu'(a), silu'(a) = s + a·s·(1 − s); db = dout · silu(a).
struct SwigluGradient {
  float da, db;
};

ALTGRAD_OPS_HD inline SwigluGradient swiglu_gradient(float a, float b, float dout) {
  const float s = swiglu_sigmoid(a);
  return {dout * b * (s * (1.0f + a * (1.0f - s))), dout * (a * s)};
}

}  // namespace altgrad::ops::cuda
