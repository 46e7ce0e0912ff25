#pragma once
// nanoGPT's initialization (GPT._init_weights and the scaled residual projections), drawn from a
// counter-based generator so that it is reproducible bit for bit from a seed, whatever the thread
// count and whatever the scalar type:
//
//   wte, wpe, c_attn.weight, mlp.c_fc.weight   normal(0, 0.02)
//   attn.c_proj.weight, mlp.c_proj.weight      normal(0, 0.02 / sqrt(2 · n_layer))
//   every bias                                 0
//   every norm weight                          1
//
// Element i of the tensor with parameter index k (its position in ParameterLayout::tensors()) is
// std · philox_normal(philox_key(seed, initialization), k, i), computed in double and then rounded to Scalar, so a float and a
// double model from one seed hold the same values up to that rounding, and adding a layer leaves
// the tensors before it unchanged.
#include <cstdint>
#include <span>

#include "model/parameter_layout.hpp"

namespace altgrad::model {

inline constexpr double kInitStd = 0.02;

// The standard deviation nanoGPT uses for a tensor of this role (0 for biases and norm weights,
// which are constants).
double init_std(ParameterRole role, std::size_t n_layer);

// A standard normal sample by Box–Muller from one Philox4x32-10 block keyed by `key`, counter
// (index, stream): two 53-bit uniforms u1 in (0, 1], u2 in [0, 1), z = sqrt(−2 ln u1)·cos(2π u2).
double philox_normal(std::uint64_t key, std::uint64_t stream, std::uint64_t index);

// Overwrites every parameter. Throws std::invalid_argument when the buffer is not layout.size().
template <typename Scalar>
void initialize_parameters(const ParameterLayout& layout, std::span<Scalar> parameters, std::uint64_t seed);

}  // namespace altgrad::model
