#pragma once
// SwiGLU on the GPU; the meaning, shapes and checks of ops/cpu/swiglu.hpp (ops/cuda/swiglu_math.hpp):
//   inp (N, 2H) rows [a | b], out (N, H) = silu(a) ⊙ b
#include <cstddef>
#include <span>

namespace altgrad::ops::cuda {

// Overwrites out.
void swiglu_forward(std::span<float> out, std::span<const float> inp, std::size_t N, std::size_t H);

// Overwrites dinp (N, 2H): da = dout · b · silu'(a), db = dout · silu(a).
void swiglu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout, std::size_t N,
                     std::size_t H);

}  // namespace altgrad::ops::cuda
