#pragma once
// Residual connection on the GPU; ops/cpu/residual.hpp: out = a + b, elementwise (n elements).
#include <span>

namespace altgrad::ops::cuda {

// Overwrites out; out may alias a or b (x += f(x) in place).
void residual_forward(std::span<float> out, std::span<const float> a, std::span<const float> b);

}  // namespace altgrad::ops::cuda
