#pragma once
// A Linear layer as the model runs it: the one place where matmul operands meet the hooks
// (matmul_hooks.hpp) on their way to the backend's GEMMs (ops/kernels.hpp).
//
//   inp (N, C), weight (OC, C), bias (OC) or empty, out (N, OC); C and OC are the point's
//   in_features and out_features.
#include <cstddef>
#include <span>

#include "model/matmul_hooks.hpp"
#include "model/matmul_points.hpp"
#include "ops/kernels.hpp"

namespace altgrad::model {

// What a forward GEMM multiplied (the stored operands, or the hooks' copies of them), and what
// they were made from. The backward pass multiplies by the same copies where the hooks say the
// copy does not depend on the reduction axis, and asks for new ones from the sources where it does.
template <typename Scalar>
struct LinearInputs {
  std::span<const Scalar> inp;
  std::span<const Scalar> weight;
  std::span<const Scalar> inp_source;
  std::span<const Scalar> weight_source;
};

// Room for the hooks' copies in the backward pass; all may be empty when hooks is null.
//   dout            (N, OC)  dY for dX = dY·W, blocked along OC (the only dY copy under per-tensor scaling)
//   dout_columns    (N, OC)  dY for dW = dYᵀ·X, blocked along N
//   inp_columns     (N, C)   X for dW, blocked along N
//   weight_columns  (OC, C)  W for dX, blocked along OC
// Each may be longer than its operand; the first elements are used.
template <typename Scalar>
struct LinearBackwardCopies {
  std::span<Scalar> dout, dout_columns, inp_columns, weight_columns;
};

// Overwrites out. An operand whose point is active is written by the hook into inp_copy (N·C) or
// weight_copy (OC·C) and the GEMM reads the copy; the copies may be empty when hooks is null.
// Where the hook's copy of inp depends on the reduction axis, only this GEMM reads it (the backward
// pass makes its own), and it goes to inp_scratch instead when that is not empty: room shared by
// every layer, which stays in cache where the layers' own copies would stream through memory.
// Returns the operands the GEMM read.
template <typename Scalar>
LinearInputs<Scalar> linear_forward(ops::Kernels<Scalar>& kernels, std::span<Scalar> out, std::span<const Scalar> inp,
                                    std::span<const Scalar> weight, std::span<const Scalar> bias,
                                    std::span<Scalar> inp_copy, std::span<Scalar> weight_copy, const MatmulPoint& point,
                                    MatmulHooks<Scalar>* hooks, std::size_t N, std::span<Scalar> inp_scratch = {});

// Adds to dinp (N, C), dweight (OC, C) and dbias (OC, or empty) from dout (N, OC) and the operands
// the forward pass used. An active :grad point is written by the hook into copies.dout, which then
// stands for dout in dX and (unless the hook is axis dependent, when dW gets copies.dout_columns)
// in dW. dbias is always the row sum of dout itself, unquantized; dout is left unchanged.
template <typename Scalar>
void linear_backward(ops::Kernels<Scalar>& kernels, std::span<Scalar> dinp, std::span<Scalar> dweight,
                     std::span<Scalar> dbias, std::span<const Scalar> dout, const LinearInputs<Scalar>& used,
                     const LinearBackwardCopies<Scalar>& copies, const MatmulPoint& point, MatmulHooks<Scalar>* hooks,
                     std::size_t N);

}  // namespace altgrad::model
