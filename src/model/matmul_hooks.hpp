#pragma once
// The seam where quantization enters the model: every matmul operand (X and W in the forward pass,
// dY in the backward pass) passes through MatmulHooks before the kernel sees it. Recipes (formats,
// scaling, statistics) live behind this interface in higher layers; the model knows only names.
//
// Straight-through estimator: the X and W a hook produced in the forward pass are kept and the
// backward pass computes dX = dY·W_q and dW = dYᵀ·X_q from them (dY being the hooked gradient when
// :grad is active). The bias gradient is the row sum of the same dY the GEMMs see.
//
// The attention core's operands (q, k, v, probs) pass the hooks in the forward pass only, and the
// backward pass reuses them the same way (model/self_attention.hpp).
//
// No hooks (a null pointer) or a hook that declines a point: the kernel reads the operand where it
// lies, with no copy.
#include <cstddef>
#include <span>
#include <string_view>

#include "model/matmul_points.hpp"

namespace altgrad::model {

// One operand of one matmul call.
struct MatmulOperand {
  std::string_view name;    // "h.3.mlp.c_fc:act"
  std::string_view matmul;  // "h.3.mlp.c_fc"
  Operand operand;
  std::size_t index;  // the point's dense index; see matmul_points.hpp
  // The operand as a row-major matrix: act (B·T, in), weight (out, in), grad (B·T, out).
  std::size_t rows;
  std::size_t cols;
  // Causal attention probabilities: (rows, cols) in cols × cols tiles whose entries above the
  // diagonal are the mask's exact zeros, which statistics should not count as values.
  bool causal = false;
};

template <typename Scalar>
class MatmulHooks {
 public:
  virtual ~MatmulHooks() = default;

  // Whether this operand goes through apply(). Asked on every pass, so a recipe may switch points
  // on and off between steps; false means the kernel reads the original, uncopied.
  virtual bool active(const MatmulOperand& operand) = 0;

  // Writes the operand as the kernel is to see it (for example fake-quantized) to `out`. `in` is the
  // original and stays as it is (the residual stream, the master weights and the skip path of the
  // gradient still need it). Both have rows·cols elements and never overlap. Called outside any
  // parallel region; it may use OpenMP itself. It must not throw once training runs.
  virtual void apply(const MatmulOperand& operand, std::span<const Scalar> in, std::span<Scalar> out) = 0;
};

}  // namespace altgrad::model
