#pragma once
// The MLP's nonlinearity, chosen by GptConfig::mlp: exact GELU or SwiGLU (ops/kernels.hpp).
//
//   inp (N, I): c_fc's output; I = H for gelu, 2H for swiglu (rows [gate | value])
//   out (N, H)
#include <cstddef>
#include <span>

#include "model/config.hpp"
#include "ops/kernels.hpp"

namespace altgrad::model {

// Overwrites out. Throws std::invalid_argument when inp is not (N, I).
template <typename Scalar>
void mlp_activation_forward(ops::Kernels<Scalar>& kernels, Mlp mlp, std::span<Scalar> out, std::span<const Scalar> inp,
                            std::size_t N, std::size_t H);

// Overwrites dinp (N, I).
template <typename Scalar>
void mlp_activation_backward(ops::Kernels<Scalar>& kernels, Mlp mlp, std::span<Scalar> dinp,
                             std::span<const Scalar> inp, std::span<const Scalar> dout, std::size_t N, std::size_t H);

}  // namespace altgrad::model
