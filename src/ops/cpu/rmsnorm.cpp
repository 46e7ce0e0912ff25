#include "ops/cpu/rmsnorm.hpp"

#include <cmath>

#include "ops/cpu/parallel.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cpu {

template <typename Scalar>
void rmsnorm_forward(std::span<Scalar> out, std::span<Scalar> rstd, std::span<const Scalar> inp,
                     std::span<const Scalar> weight, std::size_t N, std::size_t C, Scalar eps) {
  check_rmsnorm_forward(out.size(), rstd.size(), inp.size(), weight.size(), N, C);

#pragma omp parallel for schedule(static) if (N * C >= kMinParallelWork)
  for (std::size_t row = 0; row < N; ++row) {
    const Scalar* x = inp.data() + row * C;
    Scalar* y = out.data() + row * C;
    Scalar squares = 0;
    for (std::size_t c = 0; c < C; ++c) squares += x[c] * x[c];
    const Scalar s = Scalar{1} / std::sqrt(squares / static_cast<Scalar>(C) + eps);
    for (std::size_t c = 0; c < C; ++c) y[c] = x[c] * s * weight[c];
    rstd[row] = s;
  }
}

template <typename Scalar>
void rmsnorm_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<const Scalar> dout,
                      std::span<const Scalar> inp, std::span<const Scalar> weight, std::span<const Scalar> rstd,
                      std::size_t N, std::size_t C) {
  check_rmsnorm_backward(dinp.size(), dweight.size(), dout.size(), inp.size(), weight.size(), rstd.size(), N, C);

  // With norm = x·rstd and dnorm = weight·dout, rstd's dependence on x adds −norm·mean(dnorm·norm):
  //   dx = rstd · (dnorm − norm · mean(dnorm · norm))
#pragma omp parallel for schedule(static) if (N * C >= kMinParallelWork)
  for (std::size_t row = 0; row < N; ++row) {
    const Scalar* x = inp.data() + row * C;
    const Scalar* dy = dout.data() + row * C;
    Scalar* dx = dinp.data() + row * C;
    const Scalar s = rstd[row];
    Scalar dnorm_norm_sum = 0;
    for (std::size_t c = 0; c < C; ++c) dnorm_norm_sum += weight[c] * dy[c] * (x[c] * s);
    const Scalar dnorm_norm_mean = dnorm_norm_sum / static_cast<Scalar>(C);
    for (std::size_t c = 0; c < C; ++c) dx[c] += s * (weight[c] * dy[c] - x[c] * s * dnorm_norm_mean);
  }

  // dweight is a sum over rows: column blocks, rows in order.
  for_each_column_block(C, N * C, [&](std::size_t begin, std::size_t end) {
    for (std::size_t row = 0; row < N; ++row) {
      const Scalar* x = inp.data() + row * C;
      const Scalar* dy = dout.data() + row * C;
      const Scalar s = rstd[row];
      for (std::size_t c = begin; c < end; ++c) dweight[c] += x[c] * s * dy[c];
    }
  });
}

template void rmsnorm_forward<float>(std::span<float>, std::span<float>, std::span<const float>, std::span<const float>,
                                     std::size_t, std::size_t, float);
template void rmsnorm_forward<double>(std::span<double>, std::span<double>, std::span<const double>,
                                      std::span<const double>, std::size_t, std::size_t, double);
template void rmsnorm_backward<float>(std::span<float>, std::span<float>, std::span<const float>,
                                      std::span<const float>, std::span<const float>, std::span<const float>,
                                      std::size_t, std::size_t);
template void rmsnorm_backward<double>(std::span<double>, std::span<double>, std::span<const double>,
                                       std::span<const double>, std::span<const double>, std::span<const double>,
                                       std::size_t, std::size_t);

}  // namespace altgrad::ops::cpu
