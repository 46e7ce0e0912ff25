#pragma once
// RMS normalization on the GPU; the meaning, shapes and checks of ops/cpu/rmsnorm.hpp, and its bits
// (ops/cuda/rmsnorm_math.hpp). inp, out (N, C); weight (C); rstd (N).
#include <cstddef>
#include <span>

namespace altgrad::ops::cuda {

// Overwrites out and rstd.
void rmsnorm_forward(std::span<float> out, std::span<float> rstd, std::span<const float> inp,
                     std::span<const float> weight, std::size_t N, std::size_t C, float eps);

// Adds to dinp (N, C) and dweight (C).
void rmsnorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<const float> dout,
                      std::span<const float> inp, std::span<const float> weight, std::span<const float> rstd,
                      std::size_t N, std::size_t C);

}  // namespace altgrad::ops::cuda
