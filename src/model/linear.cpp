#include "model/linear.hpp"

#include <stdexcept>
#include <string>

namespace altgrad::model {
namespace {

MatmulOperand describe(const MatmulPoint& point, Operand operand, std::size_t rows, std::size_t cols,
                       Reduction reduction) {
  return {point.operand_name(operand),
          point.name,
          operand,
          point.index * kOperandsPerMatmul + static_cast<std::size_t>(operand),
          rows,
          cols,
          reduction,
          0};
}

// The operand the kernel is to read at one point: the original, or the hook's copy of it.
template <typename Scalar>
std::span<const Scalar> through_hook(MatmulHooks<Scalar>* hooks, const MatmulOperand& described,
                                     std::span<const Scalar> original, std::span<Scalar> copy) {
  const std::size_t rows = described.rows, cols = described.cols;
  if (hooks == nullptr || !hooks->active(described)) return original;
  if (copy.size() < rows * cols) {
    throw std::logic_error(std::string(described.name) + ": no room for the hooked operand (" +
                           std::to_string(copy.size()) + " elements, need " + std::to_string(rows * cols) +
                           "); make the Activations with OperandCopies::allocated");
  }
  const std::span<Scalar> out = copy.first(rows * cols);
  hooks->apply(described, original, out);
  return out;
}

// One GEMM as the hooks' recipe has it: the float GEMM (no model), or an accumulator model with
// how it reads each operand's copy.
template <typename Scalar>
ops::EmulatedGemm emulated(MatmulHooks<Scalar>* hooks, const MatmulPoint& point, Gemm gemm, const MatmulOperand& a,
                           const MatmulOperand& b) {
  if (hooks == nullptr) return {};
  const format::AccumulatorModel* model = hooks->accumulation(point, gemm);
  if (model == nullptr) return {};
  const auto grid = [&](const MatmulOperand& operand) {
    return hooks->active(operand) ? hooks->grid(operand) : ops::GridOperand{};
  };
  return {model, grid(a), grid(b)};
}

}  // namespace

template <typename Scalar>
LinearInputs<Scalar> linear_forward(ops::Kernels<Scalar>& kernels, std::span<Scalar> out, std::span<const Scalar> inp,
                                    std::span<const Scalar> weight, std::span<const Scalar> bias,
                                    std::span<Scalar> inp_copy, std::span<Scalar> weight_copy, const MatmulPoint& point,
                                    MatmulHooks<Scalar>* hooks, std::size_t N, std::span<Scalar> inp_scratch) {
  const std::size_t C = point.in_features, OC = point.out_features;
  const MatmulOperand x = describe(point, Operand::act, N, C, Reduction::along_cols);
  const bool gemm_only = hooks != nullptr && !inp_scratch.empty() && hooks->active(x) && hooks->axis_dependent(x);
  const MatmulOperand w = describe(point, Operand::weight, OC, C, Reduction::along_cols);
  const LinearInputs<Scalar> used{through_hook(hooks, x, inp, gemm_only ? inp_scratch : inp_copy),
                                  through_hook(hooks, w, weight, weight_copy), inp, weight};
  const ops::EmulatedGemm forward = emulated(hooks, point, Gemm::forward, x, w);
  if (forward.model != nullptr) {
    kernels.matmul_forward_emulated(out, used.inp, used.weight, bias, N, C, OC, forward);
  } else {
    kernels.matmul_forward(out, used.inp, used.weight, bias, N, C, OC);
  }
  return used;
}

namespace {

// The copy of an operand for a backward GEMM that reduces along its rows: the forward's copy when
// the hook's copy does not depend on the axis (or no hook is active), a new one from the source
// otherwise.
template <typename Scalar>
std::span<const Scalar> column_copy(MatmulHooks<Scalar>* hooks, const MatmulOperand& described,
                                    std::span<const Scalar> forward_copy, std::span<const Scalar> source,
                                    std::span<Scalar> room) {
  if (hooks == nullptr || !hooks->active(described) || !hooks->axis_dependent(described)) return forward_copy;
  return through_hook(hooks, described, source, room);
}

}  // namespace

template <typename Scalar>
void linear_backward(ops::Kernels<Scalar>& kernels, std::span<Scalar> dinp, std::span<Scalar> dweight,
                     std::span<Scalar> dbias, std::span<const Scalar> dout, const LinearInputs<Scalar>& used,
                     const LinearBackwardCopies<Scalar>& copies, const MatmulPoint& point, MatmulHooks<Scalar>* hooks,
                     std::size_t N) {
  const std::size_t C = point.in_features, OC = point.out_features;
  // dX = dY·W reduces over OC: dY along its rows' OC, W down its OC rows.
  const MatmulOperand dy_described = describe(point, Operand::grad, N, OC, Reduction::along_cols);
  const MatmulOperand w_described = describe(point, Operand::weight, OC, C, Reduction::along_rows);
  const std::span<const Scalar> dy = through_hook(hooks, dy_described, dout, copies.dout);
  const std::span<const Scalar> w =
      column_copy(hooks, w_described, used.weight, used.weight_source, copies.weight_columns);
  // dW = dYᵀ·X reduces over the N tokens: both down their columns.
  const MatmulOperand dy_columns_described = describe(point, Operand::grad, N, OC, Reduction::along_rows);
  const MatmulOperand x_described = describe(point, Operand::act, N, C, Reduction::along_rows);
  const std::span<const Scalar> dy_columns = column_copy(hooks, dy_columns_described, dy, dout, copies.dout_columns);
  const std::span<const Scalar> x = column_copy(hooks, x_described, used.inp, used.inp_source, copies.inp_columns);
  const ops::MatmulBackwardOperands<Scalar> operands{dy, w, dy_columns, x, dout};
  const ops::EmulatedGemm dgrad = emulated(hooks, point, Gemm::dgrad, dy_described, w_described);
  const ops::EmulatedGemm wgrad = emulated(hooks, point, Gemm::wgrad, dy_columns_described, x_described);
  if (dgrad.model != nullptr || wgrad.model != nullptr) {
    kernels.matmul_backward_emulated(dinp, dweight, dbias, operands, N, C, OC, dgrad, wgrad);
  } else {
    kernels.matmul_backward(dinp, dweight, dbias, operands, N, C, OC);
  }
}

template LinearInputs<float> linear_forward<float>(ops::Kernels<float>&, std::span<float>, std::span<const float>,
                                                   std::span<const float>, std::span<const float>, std::span<float>,
                                                   std::span<float>, const MatmulPoint&, MatmulHooks<float>*,
                                                   std::size_t, std::span<float>);
template LinearInputs<double> linear_forward<double>(ops::Kernels<double>&, std::span<double>, std::span<const double>,
                                                     std::span<const double>, std::span<const double>,
                                                     std::span<double>, std::span<double>, const MatmulPoint&,
                                                     MatmulHooks<double>*, std::size_t, std::span<double>);
template void linear_backward<float>(ops::Kernels<float>&, std::span<float>, std::span<float>, std::span<float>,
                                     std::span<const float>, const LinearInputs<float>&,
                                     const LinearBackwardCopies<float>&, const MatmulPoint&, MatmulHooks<float>*,
                                     std::size_t);
template void linear_backward<double>(ops::Kernels<double>&, std::span<double>, std::span<double>, std::span<double>,
                                      std::span<const double>, const LinearInputs<double>&,
                                      const LinearBackwardCopies<double>&, const MatmulPoint&, MatmulHooks<double>*,
                                      std::size_t);

}  // namespace altgrad::model
