#include "model/norm.hpp"

namespace altgrad::model {

template <typename Scalar>
void norm_forward(ops::Kernels<Scalar>& kernels, Norm norm, std::span<Scalar> out, std::span<Scalar> mean,
                  std::span<Scalar> rstd, std::span<const Scalar> inp, std::span<const Scalar> weight,
                  std::span<const Scalar> bias, std::size_t N, std::size_t C) {
  const auto eps = static_cast<Scalar>(kNormEps);
  if (norm == Norm::layernorm) {
    kernels.layernorm_forward(out, mean, rstd, inp, weight, bias, N, C, eps);
  } else {
    kernels.rmsnorm_forward(out, rstd, inp, weight, N, C, eps);
  }
}

template <typename Scalar>
void norm_backward(ops::Kernels<Scalar>& kernels, Norm norm, std::span<Scalar> dinp, std::span<Scalar> dweight,
                   std::span<Scalar> dbias, std::span<const Scalar> dout, std::span<const Scalar> inp,
                   std::span<const Scalar> weight, std::span<const Scalar> mean, std::span<const Scalar> rstd,
                   std::size_t N, std::size_t C) {
  if (norm == Norm::layernorm) {
    kernels.layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
  } else {
    kernels.rmsnorm_backward(dinp, dweight, dout, inp, weight, rstd, N, C);
  }
}

template void norm_forward<float>(ops::Kernels<float>&, Norm, std::span<float>, std::span<float>, std::span<float>,
                                  std::span<const float>, std::span<const float>, std::span<const float>, std::size_t,
                                  std::size_t);
template void norm_forward<double>(ops::Kernels<double>&, Norm, std::span<double>, std::span<double>, std::span<double>,
                                   std::span<const double>, std::span<const double>, std::span<const double>,
                                   std::size_t, std::size_t);
template void norm_backward<float>(ops::Kernels<float>&, Norm, std::span<float>, std::span<float>, std::span<float>,
                                   std::span<const float>, std::span<const float>, std::span<const float>,
                                   std::span<const float>, std::span<const float>, std::size_t, std::size_t);
template void norm_backward<double>(ops::Kernels<double>&, Norm, std::span<double>, std::span<double>,
                                    std::span<double>, std::span<const double>, std::span<const double>,
                                    std::span<const double>, std::span<const double>, std::span<const double>,
                                    std::size_t, std::size_t);

}  // namespace altgrad::model
