#pragma once
// The MLP's nonlinearity, chosen by GptConfig::mlp: exact GELU (ops/cpu/gelu.hpp) or SwiGLU
// (ops/cpu/swiglu.hpp).
//
//   inp (N, I): c_fc's output; I = H for gelu, 2H for swiglu (rows [gate | value])
//   out (N, H)
#include <cstddef>
#include <span>

#include "model/config.hpp"

namespace altgrad::model {

// Overwrites out.
template <typename Scalar>
void mlp_activation_forward(Mlp mlp, std::span<Scalar> out, std::span<const Scalar> inp, std::size_t N, std::size_t H);

// Overwrites dinp (N, I).
template <typename Scalar>
void mlp_activation_backward(Mlp mlp, std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout,
                             std::size_t N, std::size_t H);

}  // namespace altgrad::model
