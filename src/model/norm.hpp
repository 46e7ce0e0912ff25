#pragma once
// The block's normalization, chosen by GptConfig::norm: LayerNorm or RMSNorm (ops/kernels.hpp),
// both with eps = kNormEps.
//
//   inp, out (N, C); weight (C); bias (C) or empty (always empty for rmsnorm);
//   mean (N) for layernorm, empty for rmsnorm; rstd (N)
#include <cstddef>
#include <span>

#include "model/config.hpp"
#include "ops/kernels.hpp"

namespace altgrad::model {

// Overwrites out, mean and rstd.
template <typename Scalar>
void norm_forward(ops::Kernels<Scalar>& kernels, Norm norm, std::span<Scalar> out, std::span<Scalar> mean,
                  std::span<Scalar> rstd, std::span<const Scalar> inp, std::span<const Scalar> weight,
                  std::span<const Scalar> bias, std::size_t N, std::size_t C);

// Adds to dinp (N, C), dweight (C) and dbias (C, or empty).
template <typename Scalar>
void norm_backward(ops::Kernels<Scalar>& kernels, Norm norm, std::span<Scalar> dinp, std::span<Scalar> dweight,
                   std::span<Scalar> dbias, std::span<const Scalar> dout, std::span<const Scalar> inp,
                   std::span<const Scalar> weight, std::span<const Scalar> mean, std::span<const Scalar> rstd,
                   std::size_t N, std::size_t C);

}  // namespace altgrad::model
