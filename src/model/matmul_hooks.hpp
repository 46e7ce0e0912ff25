#pragma once
// The seam where quantization enters the model: every matmul operand (X and W in the forward pass,
// dY in the backward pass) passes through MatmulHooks before the kernel sees it. Recipes (formats,
// scaling, statistics) live behind this interface in higher layers; the model knows only names.
//
// Every hooked operand is described with the axis its GEMM reduces over. Straight-through
// estimator: the backward pass computes dX = dY·W_q and dW = dYᵀ·X_q. Where a hook's copy does
// not depend on that axis (axis_dependent() false: per-tensor scaling), the X and W the forward
// pass used serve the backward GEMMs too and one copy of dY serves both. Where it does (block
// scaling), each backward GEMM asks for its own copies from the unquantized tensors, described
// along its own reduction axis: dX = dY·W reduces over output features (dY row-wise, W
// column-wise), dW = dYᵀ·X over tokens (dY and X column-wise). The bias gradient is the row sum
// of the unquantized dY.
//
// The attention core's operands (q, k, v, probs) go through the same rule (model/self_attention.hpp);
// its output gradient and the softmax stay unquantized. So only its two forward products can read
// two quantized operands, and only they can take an accumulator model.
//
// No hooks (a null pointer) or a hook that declines a point: the kernel reads the operand where it
// lies, with no copy.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "format/accumulator.hpp"
#include "model/matmul_points.hpp"
#include "ops/operands.hpp"

namespace altgrad::model {

// The axis of the operand, as a row-major (rows, cols) matrix, that the GEMM reading the copy
// sums over.
enum class Reduction : std::uint8_t {
  along_cols,  // within each row: the row-wise copy (X and W of Y = X·Wᵀ, dY of dX = dY·W)
  along_rows,  // down each column: the column-wise copy (X and dY of dW = dYᵀ·X, W of dX = dY·W)
};

// One operand of one matmul call.
struct MatmulOperand {
  std::string_view name;    // "h.3.mlp.c_fc:act"
  std::string_view matmul;  // "h.3.mlp.c_fc"
  Operand operand;
  std::size_t index;  // the point's dense index; see matmul_points.hpp
  // The operand as a row-major matrix: act (B·T, in), weight (out, in), grad (B·T, out).
  std::size_t rows;
  std::size_t cols;
  Reduction reduction = Reduction::along_cols;
  // Elements of one reduction along that axis, when shorter than the axis: one head's channels of
  // q and k, one sequence's positions of v and probs. 0: the whole axis.
  std::size_t run = 0;
  // Causal attention probabilities: (rows, cols) in cols × cols tiles whose entries above the
  // diagonal are the mask's exact zeros, which statistics should not count as values.
  bool causal = false;
};

// The three GEMMs of a Linear Y = X·Wᵀ: forward, dgrad (dX = dY·W), wgrad (dW = dYᵀ·X).
enum class Gemm : std::uint8_t { forward, dgrad, wgrad };

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

  // Whether the copy apply() writes depends on operand.reduction (block scaling does: its blocks
  // run along the reduction). Asked only of active operands. False: the copy made for one GEMM is
  // reused by every GEMM that reads the operand.
  virtual bool axis_dependent(const MatmulOperand& operand) {
    (void)operand;
    return false;
  }

  // How one GEMM of a Linear sums its products (format/accumulator.hpp): null for the backend's
  // float GEMM, else a model that lives as long as the hooks. Asked on every pass.
  virtual const format::AccumulatorModel* accumulation(const MatmulPoint& matmul, Gemm gemm) {
    (void)matmul, (void)gemm;
    return nullptr;
  }

  // How one of a block's two forward attention products sums its products (matmul_points.hpp's
  // AttentionGemm), as accumulation() for a Linear's GEMMs: null for the backend's float GEMM.
  virtual const format::AccumulatorModel* attention_accumulation(std::size_t layer, AttentionGemm gemm) {
    (void)layer, (void)gemm;
    return nullptr;
  }

  // How a GEMM under an accumulator model reads the copy apply() last wrote for this operand: the
  // copy's grid and scale (ops/operands.hpp). Asked only of active operands of such GEMMs.
  virtual ops::GridOperand grid(const MatmulOperand& operand) {
    (void)operand;
    return {};
  }
};

}  // namespace altgrad::model
