#pragma once
// Layer normalization over the last dimension, as torch.nn.LayerNorm (biased variance):
//   out = (inp − mean) · rstd · weight + bias,   rstd = 1 / sqrt(var + eps)
//
//   inp, out   (N, C)   N = B·T rows
//   weight     (C)
//   bias       (C)      optional: nanoGPT's default bias=False passes an empty span
//   mean, rstd (N)      written by the forward pass, read by the backward pass
//
// nanoGPT uses eps = 1e-5.
#include <cstddef>
#include <span>

namespace altgrad::ops::cpu {

// Overwrites out, mean and rstd.
template <typename Scalar>
void layernorm_forward(std::span<Scalar> out, std::span<Scalar> mean, std::span<Scalar> rstd,
                       std::span<const Scalar> inp, std::span<const Scalar> weight, std::span<const Scalar> bias,
                       std::size_t N, std::size_t C, Scalar eps);

// Adds to dinp (N, C), dweight (C) and dbias (C; empty when there is no bias).
template <typename Scalar>
void layernorm_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                        std::span<const Scalar> dout, std::span<const Scalar> inp, std::span<const Scalar> weight,
                        std::span<const Scalar> mean, std::span<const Scalar> rstd, std::size_t N, std::size_t C);

}  // namespace altgrad::ops::cpu
