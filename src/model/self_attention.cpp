#include "model/self_attention.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>

namespace altgrad::model {
namespace {

// An attention point as a hook sees it. Its matmul is its name without the operand suffix ("h.3.attn"
// of "h.3.attn.q"): a view into the point's own name, so describing a point allocates nothing.
MatmulOperand describe(const OperandPoint& point, std::size_t rows, std::size_t cols, Reduction reduction,
                       std::size_t run) {
  const std::string_view name = point.name;
  // The probabilities are causal in both of their copies: the masked entries are exact zeros.
  return {name, name.substr(0, name.rfind('.')), point.operand, point.index, rows, cols, reduction, run,
          point.operand == Operand::probs};
}

// The axis each product reduces its operands over, for q, k, v described as (B·T, C) and probs as
// (B·NH·T, T). Forward: scores = q·kᵀ over a head's hs channels, out = probs·v over the key
// positions of a sequence. Backward: dprobs = dy·vᵀ over a head's channels, dq = dscores·k and
// dk = dscoresᵀ·q over the positions of a sequence, dv = probsᵀ·dy over query positions.
struct Axis {
  Reduction reduction;
  bool per_head;  // runs of hs channels; otherwise runs of T positions
};
constexpr std::array<Axis, 4> kForwardAxes{{{Reduction::along_cols, true},    // q
                                            {Reduction::along_cols, true},    // k
                                            {Reduction::along_rows, false},   // v
                                            {Reduction::along_cols, false}}};  // probs
constexpr std::array<Axis, 4> kBackwardAxes{{{Reduction::along_rows, false},   // q
                                             {Reduction::along_rows, false},   // k
                                             {Reduction::along_cols, true},    // v
                                             {Reduction::along_rows, false}}};  // probs

MatmulOperand describe_axis(const OperandPoint& point, std::size_t rows, std::size_t cols, const Axis& axis,
                            const AttentionShape& shape) {
  return describe(point, rows, cols, axis.reduction, axis.per_head ? shape.C / shape.NH : shape.T);
}

template <typename Scalar>
std::span<Scalar> room_for(const MatmulOperand& operand, std::span<Scalar> buffer, std::size_t size) {
  if (buffer.size() < size) {
    throw std::logic_error(std::string(operand.name) + ": no room for the hooked operand (" +
                           std::to_string(buffer.size()) + " elements, need " + std::to_string(size) +
                           "); make the Activations with OperandCopies::allocated");
  }
  return buffer.first(size);
}

// third (N, C) = qkv[:, part·C : (part + 1)·C] for qkv (N, 3C); part 0, 1, 2 is q, k, v.
template <typename Scalar>
void gather_third(ops::Memory& memory, std::span<Scalar> third, std::span<const Scalar> qkv, std::size_t part,
                  std::size_t N, std::size_t C) {
  memory.copy_rows(third.data(), C * sizeof(Scalar), qkv.data() + part * C, 3 * C * sizeof(Scalar), C * sizeof(Scalar),
                   N);
}

// qkv[:, part·C : (part + 1)·C] = third: the inverse of gather_third.
template <typename Scalar>
void scatter_third(ops::Memory& memory, std::span<Scalar> qkv, std::span<const Scalar> third, std::size_t part,
                   std::size_t N, std::size_t C) {
  memory.copy_rows(qkv.data() + part * C, 3 * C * sizeof(Scalar), third.data(), C * sizeof(Scalar), C * sizeof(Scalar),
                   N);
}

// The qkv the products are to read: `start` while no third needs a new copy, else copies.qkv,
// made from `start` at the first such third and then rewritten third by third from `qkv`, each
// along its product's axis. In the forward pass start = qkv and every active third is copied; in
// the backward pass start is the forward's qkv and only axis-dependent thirds get new copies.
template <typename Scalar>
std::span<const Scalar> hooked_qkv(std::span<const Scalar> qkv, std::span<const Scalar> start,
                                   const AttentionCopies<Scalar>& copies, const MatmulPoints& points,
                                   std::size_t layer, MatmulHooks<Scalar>& hooks, const AttentionShape& shape,
                                   bool backward) {
  constexpr std::array<Operand, 3> thirds{Operand::q, Operand::k, Operand::v};
  const std::size_t N = shape.B * shape.T, C = shape.C;
  std::span<Scalar> copy;
  for (std::size_t part = 0; part < thirds.size(); ++part) {
    const Axis& axis = (backward ? kBackwardAxes : kForwardAxes)[part];
    const MatmulOperand described = describe_axis(points.attention(layer, thirds[part]), N, C, axis, shape);
    if (!hooks.active(described)) continue;
    if (backward && !hooks.axis_dependent(described)) continue;
    if (copy.empty()) {
      copy = room_for(described, copies.qkv, N * 3 * C);
      copies.memory->copy(copy.data(), start.data(), copy.size_bytes());
    }
    const std::span<Scalar> in = room_for(described, copies.third, N * C);
    const std::span<Scalar> out = room_for(described, copies.third_hooked, N * C);
    gather_third<Scalar>(*copies.memory, in, qkv, part, N, C);
    hooks.apply(described, in, out);
    scatter_third<Scalar>(*copies.memory, copy, out, part, N, C);
  }
  return copy.empty() ? start : std::span<const Scalar>(copy);
}

// An attention point as its forward product reads it: q, k, v as (B·T, C), probs as (B·NH·T, T).
MatmulOperand forward_operand(const MatmulPoints& points, std::size_t layer, Operand operand,
                              const AttentionShape& shape) {
  const auto [B, T, C, NH] = shape;
  const std::size_t slot = static_cast<std::size_t>(operand) - static_cast<std::size_t>(Operand::q);
  const bool probs = operand == Operand::probs;
  return describe_axis(points.attention(layer, operand), probs ? B * NH * T : B * T, probs ? T : C,
                       kForwardAxes[slot], shape);
}

// One forward product as the hooks' recipe has it, asked once its operands' copies are made (their
// grids carry the scales of those calls): the float GEMM (no model), or an accumulator model with
// how it reads each copy, as model/linear.cpp asks for a Linear's GEMMs.
template <typename Scalar>
ops::EmulatedGemm emulated(MatmulHooks<Scalar>& hooks, const MatmulPoints& points, std::size_t layer,
                           AttentionGemm gemm, const AttentionShape& shape) {
  const format::AccumulatorModel* model = hooks.attention_accumulation(layer, gemm);
  if (model == nullptr) return {};
  const auto grid = [&](Operand operand) {
    const MatmulOperand described = forward_operand(points, layer, operand, shape);
    return hooks.active(described) ? hooks.grid(described) : ops::GridOperand{};
  };
  const auto [a, b] = attention_gemm_operands(gemm);
  return {model, grid(a), grid(b)};
}

// The forward pass in two halves, each under its model where it has one, with the hook on the
// probabilities between them. Returns what out = probs · v multiplied.
template <typename Scalar>
std::span<const Scalar> forward_halves(ops::Kernels<Scalar>& kernels, std::span<Scalar> out, std::span<Scalar> probs,
                                       std::span<const Scalar> qkv_used, const AttentionCopies<Scalar>& copies,
                                       const MatmulPoints& points, std::size_t layer, MatmulHooks<Scalar>& hooks,
                                       const AttentionShape& shape) {
  const ops::EmulatedGemm scores = emulated(hooks, points, layer, AttentionGemm::scores, shape);
  if (scores.model != nullptr) {
    kernels.attention_probs_forward_emulated(probs, qkv_used, shape, scores);
  } else {
    kernels.attention_probs_forward(probs, qkv_used, shape);
  }
  const MatmulOperand described = forward_operand(points, layer, Operand::probs, shape);
  std::span<const Scalar> probs_used = probs;
  if (hooks.active(described)) {
    const std::span<Scalar> copy = room_for(described, copies.probs, shape.B * shape.NH * shape.T * shape.T);
    hooks.apply(described, probs, copy);
    probs_used = copy;
  }
  const ops::EmulatedGemm values = emulated(hooks, points, layer, AttentionGemm::values, shape);
  if (values.model != nullptr) {
    kernels.attention_values_forward_emulated(out, probs_used, qkv_used, shape, values);
  } else {
    kernels.attention_values_forward(out, probs_used, qkv_used, shape);
  }
  return probs_used;
}

}  // namespace

template <typename Scalar>
ops::AttentionOperands<Scalar> self_attention_forward(ops::Kernels<Scalar>& kernels, std::span<Scalar> out,
                                                      std::span<Scalar> probs, std::span<const Scalar> qkv,
                                                      const AttentionCopies<Scalar>& copies, const MatmulPoints& points,
                                                      std::size_t layer, MatmulHooks<Scalar>* hooks,
                                                      const AttentionShape& shape) {
  if (hooks == nullptr) {
    kernels.attention_forward(out, probs, qkv, shape);
    return {qkv, probs};
  }
  const std::span<const Scalar> qkv_used = hooked_qkv(qkv, qkv, copies, points, layer, *hooks, shape, false);
  // Both products in one visit per head, where neither the probabilities' hook nor a model needs
  // them apart (the halves give the same bits).
  const bool apart = hooks->active(forward_operand(points, layer, Operand::probs, shape)) ||
                     hooks->attention_accumulation(layer, AttentionGemm::scores) != nullptr ||
                     hooks->attention_accumulation(layer, AttentionGemm::values) != nullptr;
  if (!apart) {
    kernels.attention_forward(out, probs, qkv_used, shape);
    return {qkv_used, probs};
  }
  return {qkv_used, forward_halves(kernels, out, probs, qkv_used, copies, points, layer, *hooks, shape)};
}

template <typename Scalar>
ops::AttentionOperands<Scalar> self_attention_backward_operands(
    const ops::AttentionOperands<Scalar>& used, std::span<const Scalar> qkv, std::span<const Scalar> probs,
    const AttentionCopies<Scalar>& copies, const MatmulPoints& points, std::size_t layer, MatmulHooks<Scalar>* hooks,
    const AttentionShape& shape) {
  if (hooks == nullptr) return used;
  const auto [B, T, C, NH] = shape;
  const std::span<const Scalar> qkv_used = hooked_qkv(qkv, used.qkv, copies, points, layer, *hooks, shape, true);
  const MatmulOperand described =
      describe_axis(points.attention(layer, Operand::probs), B * NH * T, T, kBackwardAxes[3], shape);
  if (!hooks->active(described) || !hooks->axis_dependent(described)) return {qkv_used, used.probs};
  const std::span<Scalar> probs_used = room_for(described, copies.probs, B * NH * T * T);
  hooks->apply(described, probs, probs_used);
  return {qkv_used, probs_used};
}

template ops::AttentionOperands<float> self_attention_forward<float>(ops::Kernels<float>&, std::span<float>,
                                                                     std::span<float>, std::span<const float>,
                                                                     const AttentionCopies<float>&, const MatmulPoints&,
                                                                     std::size_t, MatmulHooks<float>*,
                                                                     const AttentionShape&);
template ops::AttentionOperands<double> self_attention_forward<double>(ops::Kernels<double>&, std::span<double>,
                                                                       std::span<double>, std::span<const double>,
                                                                       const AttentionCopies<double>&,
                                                                       const MatmulPoints&, std::size_t,
                                                                       MatmulHooks<double>*, const AttentionShape&);

template ops::AttentionOperands<float> self_attention_backward_operands<float>(
    const ops::AttentionOperands<float>&, std::span<const float>, std::span<const float>, const AttentionCopies<float>&,
    const MatmulPoints&, std::size_t, MatmulHooks<float>*, const AttentionShape&);
template ops::AttentionOperands<double> self_attention_backward_operands<double>(
    const ops::AttentionOperands<double>&, std::span<const double>, std::span<const double>,
    const AttentionCopies<double>&, const MatmulPoints&, std::size_t, MatmulHooks<double>*, const AttentionShape&);

}  // namespace altgrad::model
