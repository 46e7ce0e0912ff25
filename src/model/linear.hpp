#pragma once
// A Linear layer as the model runs it: the one place where matmul operands meet the hooks
// (matmul_hooks.hpp) on their way to the kernels (ops/cpu/matmul.hpp).
//
//   inp (N, C), weight (OC, C), bias (OC) or empty, out (N, OC); C and OC are the point's
//   in_features and out_features.
#include <cstddef>
#include <span>

#include "model/matmul_hooks.hpp"
#include "model/matmul_points.hpp"

namespace altgrad::model {

// What a forward GEMM multiplied: the stored operands, or the hooks' copies of them. The backward
// pass multiplies by the same ones (straight-through estimator).
template <typename Scalar>
struct LinearInputs {
  std::span<const Scalar> inp;
  std::span<const Scalar> weight;
};

// Overwrites out. An operand whose point is active is written by the hook into inp_copy (N·C) or
// weight_copy (OC·C) and the GEMM reads the copy; the copies may be empty when hooks is null.
// Returns the operands the GEMM read.
template <typename Scalar>
LinearInputs<Scalar> linear_forward(std::span<Scalar> out, std::span<const Scalar> inp, std::span<const Scalar> weight,
                                    std::span<const Scalar> bias, std::span<Scalar> inp_copy,
                                    std::span<Scalar> weight_copy, const MatmulPoint& point, MatmulHooks<Scalar>* hooks,
                                    std::size_t N);

// Adds to dinp (N, C), dweight (OC, C) and dbias (OC, or empty) from dout (N, OC) and the operands
// the forward pass used. An active :grad point is written by the hook into dout_copy (at least N·OC
// elements), which then stands for dout in all three gradients; dout itself is left unchanged.
template <typename Scalar>
void linear_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                     std::span<const Scalar> dout, const LinearInputs<Scalar>& used, std::span<Scalar> dout_copy,
                     const MatmulPoint& point, MatmulHooks<Scalar>* hooks, std::size_t N);

}  // namespace altgrad::model
