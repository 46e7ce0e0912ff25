#pragma once
// The operands the backward products of a Linear and of attention read, each as that product is
// to read it: the tensors the forward pass multiplied, or copies of them quantized along the
// backward product's own reduction axis (straight-through estimator; model/matmul_hooks.hpp).
#include <span>

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

}  // namespace altgrad::ops
