#include "ops/cpu/residual.hpp"

#include "ops/cpu/parallel.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cpu {

template <typename Scalar>
void residual_forward(std::span<Scalar> out, std::span<const Scalar> a, std::span<const Scalar> b) {
  check_residual_forward(out.size(), a.size(), b.size());
  const std::size_t n = out.size();
#pragma omp parallel for schedule(static) if (n >= kMinParallelWork)
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

template <typename Scalar>
void residual_backward(std::span<Scalar> da, std::span<Scalar> db, std::span<const Scalar> dout) {
  check_residual_backward(da.size(), db.size(), dout.size());
  const std::size_t n = dout.size();
#pragma omp parallel for schedule(static) if (n >= kMinParallelWork)
  for (std::size_t i = 0; i < n; ++i) {
    const Scalar g = dout[i];
    da[i] += g;
    db[i] += g;
  }
}

template void residual_forward<float>(std::span<float>, std::span<const float>, std::span<const float>);
template void residual_forward<double>(std::span<double>, std::span<const double>, std::span<const double>);
template void residual_backward<float>(std::span<float>, std::span<float>, std::span<const float>);
template void residual_backward<double>(std::span<double>, std::span<double>, std::span<const double>);

}  // namespace altgrad::ops::cpu
