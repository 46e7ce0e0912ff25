#include "model/linear.hpp"

#include <stdexcept>
#include <string>

#include "ops/cpu/matmul.hpp"

namespace altgrad::model {
namespace {

// The operand the kernel is to read at one point: the original, or the hook's copy of it.
template <typename Scalar>
std::span<const Scalar> through_hook(MatmulHooks<Scalar>* hooks, const MatmulPoint& point, Operand operand,
                                     std::span<const Scalar> original, std::span<Scalar> copy, std::size_t rows,
                                     std::size_t cols) {
  if (hooks == nullptr) return original;
  const MatmulOperand described{point.operand_name(operand),
                                point.name,
                                operand,
                                point.index * kOperandsPerMatmul + static_cast<std::size_t>(operand),
                                rows,
                                cols};
  if (!hooks->active(described)) return original;
  if (copy.size() < rows * cols) {
    throw std::logic_error(std::string(described.name) + ": no room for the hooked operand (" +
                           std::to_string(copy.size()) + " elements, need " + std::to_string(rows * cols) +
                           "); make the Activations with OperandCopies::allocated");
  }
  const std::span<Scalar> out = copy.first(rows * cols);
  hooks->apply(described, original, out);
  return out;
}

}  // namespace

template <typename Scalar>
LinearInputs<Scalar> linear_forward(std::span<Scalar> out, std::span<const Scalar> inp, std::span<const Scalar> weight,
                                    std::span<const Scalar> bias, std::span<Scalar> inp_copy,
                                    std::span<Scalar> weight_copy, const MatmulPoint& point, MatmulHooks<Scalar>* hooks,
                                    std::size_t N) {
  const std::size_t C = point.in_features, OC = point.out_features;
  const LinearInputs<Scalar> used{through_hook(hooks, point, Operand::act, inp, inp_copy, N, C),
                                  through_hook(hooks, point, Operand::weight, weight, weight_copy, OC, C)};
  ops::cpu::matmul_forward(out, used.inp, used.weight, bias, N, C, OC);
  return used;
}

template <typename Scalar>
void linear_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                     std::span<const Scalar> dout, const LinearInputs<Scalar>& used, std::span<Scalar> dout_copy,
                     const MatmulPoint& point, MatmulHooks<Scalar>* hooks, std::size_t N) {
  const std::size_t C = point.in_features, OC = point.out_features;
  const std::span<const Scalar> dy = through_hook(hooks, point, Operand::grad, dout, dout_copy, N, OC);
  ops::cpu::matmul_backward(dinp, dweight, dbias, dy, used.inp, used.weight, N, C, OC);
}

template LinearInputs<float> linear_forward<float>(std::span<float>, std::span<const float>, std::span<const float>,
                                                   std::span<const float>, std::span<float>, std::span<float>,
                                                   const MatmulPoint&, MatmulHooks<float>*, std::size_t);
template LinearInputs<double> linear_forward<double>(std::span<double>, std::span<const double>,
                                                     std::span<const double>, std::span<const double>,
                                                     std::span<double>, std::span<double>, const MatmulPoint&,
                                                     MatmulHooks<double>*, std::size_t);
template void linear_backward<float>(std::span<float>, std::span<float>, std::span<float>, std::span<const float>,
                                     const LinearInputs<float>&, std::span<float>, const MatmulPoint&,
                                     MatmulHooks<float>*, std::size_t);
template void linear_backward<double>(std::span<double>, std::span<double>, std::span<double>, std::span<const double>,
                                      const LinearInputs<double>&, std::span<double>, const MatmulPoint&,
                                      MatmulHooks<double>*, std::size_t);

}  // namespace altgrad::model
