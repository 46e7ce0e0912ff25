#pragma once
// Layer normalization on the GPU; the meaning, shapes and checks of ops/cpu/layernorm.hpp, and its
// bits (ops/cuda/layernorm_math.hpp). inp, out (N, C); weight (C); bias (C) or empty; mean, rstd (N).
#include <cstddef>
#include <span>

namespace altgrad::ops::cuda {

// Overwrites out, mean and rstd.
void layernorm_forward(std::span<float> out, std::span<float> mean, std::span<float> rstd, std::span<const float> inp,
                       std::span<const float> weight, std::span<const float> bias, std::size_t N, std::size_t C,
                       float eps);

// Adds to dinp (N, C), dweight (C) and dbias (C; empty when there is no bias).
void layernorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                        std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                        std::span<const float> mean, std::span<const float> rstd, std::size_t N, std::size_t C);

}  // namespace altgrad::ops::cuda
