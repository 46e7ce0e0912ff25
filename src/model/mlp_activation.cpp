#include "model/mlp_activation.hpp"

#include "ops/argument_checks.hpp"

namespace altgrad::model {

template <typename Scalar>
void mlp_activation_forward(ops::Kernels<Scalar>& kernels, Mlp mlp, std::span<Scalar> out, std::span<const Scalar> inp,
                            std::size_t N, std::size_t H) {
  if (mlp == Mlp::swiglu) {
    kernels.swiglu_forward(out, inp, N, H);
    return;
  }
  // gelu is elementwise and takes any shape; the sizes are checked here against (N, H).
  ops::require_size("mlp_activation_forward", "inp", inp.size(), N * H);
  kernels.gelu_forward(out, inp);
}

template <typename Scalar>
void mlp_activation_backward(ops::Kernels<Scalar>& kernels, Mlp mlp, std::span<Scalar> dinp,
                             std::span<const Scalar> inp, std::span<const Scalar> dout, std::size_t N, std::size_t H) {
  if (mlp == Mlp::swiglu) {
    kernels.swiglu_backward(dinp, inp, dout, N, H);
    return;
  }
  ops::require_size("mlp_activation_backward", "inp", inp.size(), N * H);
  kernels.gelu_backward(dinp, inp, dout);
}

template void mlp_activation_forward<float>(ops::Kernels<float>&, Mlp, std::span<float>, std::span<const float>,
                                            std::size_t, std::size_t);
template void mlp_activation_forward<double>(ops::Kernels<double>&, Mlp, std::span<double>, std::span<const double>,
                                             std::size_t, std::size_t);
template void mlp_activation_backward<float>(ops::Kernels<float>&, Mlp, std::span<float>, std::span<const float>,
                                             std::span<const float>, std::size_t, std::size_t);
template void mlp_activation_backward<double>(ops::Kernels<double>&, Mlp, std::span<double>, std::span<const double>,
                                              std::span<const double>, std::size_t, std::size_t);

}  // namespace altgrad::model
