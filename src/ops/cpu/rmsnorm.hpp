#pragma once
// RMS normalization over the last dimension (Zhang & Sennrich 2019; torch.nn.RMSNorm):
//   out = inp · rstd · weight,   rstd = 1 / sqrt(mean(inp²) + eps)
//
//   inp, out (N, C)   N = B·T rows
//   weight   (C)      no bias
//   rstd     (N)      written by the forward pass, read by the backward pass
#include <cstddef>
#include <span>

namespace altgrad::ops::cpu {

// Overwrites out and rstd.
template <typename Scalar>
void rmsnorm_forward(std::span<Scalar> out, std::span<Scalar> rstd, std::span<const Scalar> inp,
                     std::span<const Scalar> weight, std::size_t N, std::size_t C, Scalar eps);

// Adds to dinp (N, C) and dweight (C).
template <typename Scalar>
void rmsnorm_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<const Scalar> dout,
                      std::span<const Scalar> inp, std::span<const Scalar> weight, std::span<const Scalar> rstd,
                      std::size_t N, std::size_t C);

}  // namespace altgrad::ops::cpu
