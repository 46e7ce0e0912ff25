#pragma once
// The operands the backward products of a Linear and of attention read, each as that product is
// to read it: the tensors the forward pass multiplied, or copies of them quantized along the
// backward product's own reduction axis (straight-through estimator; model/matmul_hooks.hpp).
#include <span>

#include "format/accumulator.hpp"
#include "format/spec.hpp"

namespace altgrad::ops {

// A Linear's backward GEMMs, out = inp · weightᵀ + bias with inp (N, C), weight (OC, C):
//   dinp    += dout_dinp · weight        (N, OC)·(OC, C), reduces over OC
//   dweight += dout_dweightᵀ · inp       (OC, N)·(N, C), reduces over N
//   dbias   += Σ_rows dout_dbias         (N, OC)
template <typename Scalar>
struct MatmulBackwardOperands {
  std::span<const Scalar> dout_dinp, weight;
  std::span<const Scalar> dout_dweight, inp;
  std::span<const Scalar> dout_dbias;
};

// The operands the two attention products multiplied: qkv (B, T, 3C) for q · kᵀ and for v, probs
// (B, NH, T, T) for probs · v. Under a straight-through estimator these are rewritten copies.
template <typename Scalar>
struct AttentionOperands {
  std::span<const Scalar> qkv;
  std::span<const Scalar> probs;
};

// A fake-quantized copy as a tensor core reads it (docs/accumulation.md): the copy holds
// x̂ = Q(x·s)/s, and the tensor core multiplies the grid values Q(x·s), recovered as x̂·s rounded to
// `format`'s grid (exact while x̂ is a normal float), then applies 1/s to the sum. format null: the
// values as they are (an unscaled copy, or block scaling's values, which are the grid's already).
struct GridOperand {
  const format::Format* format = nullptr;
  float scale = 1.0f;
};

// One GEMM under an accumulator model (model null: the float GEMM), with its operands A and B in
// the order of its product: a Linear's forward X·Wᵀ, dgrad dY·W, wgrad dYᵀ·X; attention's q·kᵀ and
// probs·v.
struct EmulatedGemm {
  const format::AccumulatorModel* model = nullptr;
  GridOperand a, b;
};

}  // namespace altgrad::ops
