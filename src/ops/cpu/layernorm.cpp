#include "ops/cpu/layernorm.hpp"

#include <cmath>

#include "ops/cpu/parallel.hpp"
#include "ops/cpu/vector_math.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cpu {

template <typename Scalar>
void layernorm_forward(std::span<Scalar> out, std::span<Scalar> mean, std::span<Scalar> rstd,
                       std::span<const Scalar> inp, std::span<const Scalar> weight, std::span<const Scalar> bias,
                       std::size_t N, std::size_t C, Scalar eps) {
  check_layernorm_forward(out.size(), mean.size(), rstd.size(), inp.size(), weight.size(), bias.size(), N, C);

#pragma omp parallel for schedule(static) if (N * C >= kMinParallelWork)
  for (std::size_t row = 0; row < N; ++row) {
    const Scalar* x = inp.data() + row * C;
    Scalar* y = out.data() + row * C;
    const Scalar m = row_sum<Scalar>(C, [&](auto at) { return at(x); }) / static_cast<Scalar>(C);
    // Two passes: the variance from squared deviations does not cancel the way E[x²] − E[x]² does.
    const Scalar squares = row_sum<Scalar>(C, [&](auto at) { return (at(x) - m) * (at(x) - m); });
    const Scalar s = Scalar{1} / std::sqrt(squares / static_cast<Scalar>(C) + eps);
    for (std::size_t c = 0; c < C; ++c) y[c] = (x[c] - m) * s * weight[c];
    if (!bias.empty()) {
      for (std::size_t c = 0; c < C; ++c) y[c] += bias[c];
    }
    mean[row] = m;
    rstd[row] = s;
  }
}

template <typename Scalar>
void layernorm_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                        std::span<const Scalar> dout, std::span<const Scalar> inp, std::span<const Scalar> weight,
                        std::span<const Scalar> mean, std::span<const Scalar> rstd, std::size_t N, std::size_t C) {
  check_layernorm_backward(dinp.size(), dweight.size(), dbias.size(), dout.size(), inp.size(), weight.size(),
                           mean.size(), rstd.size(), N, C);

  // dinp, row by row. With norm = (x − mean)·rstd and dnorm = weight·dout, the mean and variance
  // paths contribute −mean(dnorm) and −norm·mean(dnorm·norm):
  //   dx = rstd · (dnorm − mean(dnorm) − norm · mean(dnorm · norm))
#pragma omp parallel for schedule(static) if (N * C >= kMinParallelWork)
  for (std::size_t row = 0; row < N; ++row) {
    const Scalar* x = inp.data() + row * C;
    const Scalar* dy = dout.data() + row * C;
    Scalar* dx = dinp.data() + row * C;
    const Scalar* w = weight.data();
    const Scalar m = mean[row];
    const Scalar s = rstd[row];
    const Scalar dnorm_sum = row_sum<Scalar>(C, [&](auto at) { return at(w) * at(dy); });
    const Scalar dnorm_norm_sum =
        row_sum<Scalar>(C, [&](auto at) { return at(w) * at(dy) * ((at(x) - m) * s); });
    const Scalar dnorm_mean = dnorm_sum / static_cast<Scalar>(C);
    const Scalar dnorm_norm_mean = dnorm_norm_sum / static_cast<Scalar>(C);
    for (std::size_t c = 0; c < C; ++c) {
      const Scalar norm = (x[c] - m) * s;
      dx[c] += s * (weight[c] * dy[c] - dnorm_mean - norm * dnorm_norm_mean);
    }
  }

  // dweight and dbias are sums over rows: column blocks, rows in order.
  for_each_column_block(C, N * C, [&](std::size_t begin, std::size_t end) {
    for (std::size_t row = 0; row < N; ++row) {
      const Scalar* x = inp.data() + row * C;
      const Scalar* dy = dout.data() + row * C;
      const Scalar m = mean[row];
      const Scalar s = rstd[row];
      for (std::size_t c = begin; c < end; ++c) dweight[c] += (x[c] - m) * s * dy[c];
      if (!dbias.empty()) {
        for (std::size_t c = begin; c < end; ++c) dbias[c] += dy[c];
      }
    }
  });
}

template void layernorm_forward<float>(std::span<float>, std::span<float>, std::span<float>, std::span<const float>,
                                       std::span<const float>, std::span<const float>, std::size_t, std::size_t, float);
template void layernorm_forward<double>(std::span<double>, std::span<double>, std::span<double>,
                                        std::span<const double>, std::span<const double>, std::span<const double>,
                                        std::size_t, std::size_t, double);
template void layernorm_backward<float>(std::span<float>, std::span<float>, std::span<float>, std::span<const float>,
                                        std::span<const float>, std::span<const float>, std::span<const float>,
                                        std::span<const float>, std::size_t, std::size_t);
template void layernorm_backward<double>(std::span<double>, std::span<double>, std::span<double>,
                                         std::span<const double>, std::span<const double>, std::span<const double>,
                                         std::span<const double>, std::span<const double>, std::size_t, std::size_t);

}  // namespace altgrad::ops::cpu
