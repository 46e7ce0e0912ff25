#pragma once
// GELU (exact erf form) on the GPU; the meaning and checks of ops/cpu/gelu.hpp, and the bits of its
// float kernel (ops/cuda/gelu_math.hpp). Elementwise over any shape.
#include <span>

namespace altgrad::ops::cuda {

// Overwrites out; out may alias inp.
void gelu_forward(std::span<float> out, std::span<const float> inp);

// Overwrites dinp with dout · gelu'(inp).
void gelu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout);

}  // namespace altgrad::ops::cuda
