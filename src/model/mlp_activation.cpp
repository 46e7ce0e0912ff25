#include "model/mlp_activation.hpp"

#include <stdexcept>
#include <string>

namespace altgrad::model {
namespace {

// GELU is elementwise and takes any shape: its sizes are checked here against (N, H).
void require_gelu_input(const char* pass, std::size_t size, std::size_t N, std::size_t H) {
  if (size != N * H) {
    throw std::invalid_argument(std::string(pass) + ": inp has " + std::to_string(size) +
                                " elements, expected N·H = " + std::to_string(N * H));
  }
}

}  // namespace

template <typename Scalar>
void mlp_activation_forward(ops::Kernels<Scalar>& kernels, Mlp mlp, std::span<Scalar> out, std::span<const Scalar> inp,
                            std::size_t N, std::size_t H) {
  if (mlp == Mlp::swiglu) {
    kernels.swiglu_forward(out, inp, N, H);
    return;
  }
  require_gelu_input("mlp_activation_forward", inp.size(), N, H);
  kernels.gelu_forward(out, inp);
}

template <typename Scalar>
void mlp_activation_backward(ops::Kernels<Scalar>& kernels, Mlp mlp, std::span<Scalar> dinp,
                             std::span<const Scalar> inp, std::span<const Scalar> dout, std::size_t N, std::size_t H) {
  if (mlp == Mlp::swiglu) {
    kernels.swiglu_backward(dinp, inp, dout, N, H);
    return;
  }
  require_gelu_input("mlp_activation_backward", inp.size(), N, H);
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
