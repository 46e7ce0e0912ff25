#include "ops/cpu/matmul.hpp"

#include "ops/cpu/gemm.hpp"
#include "ops/cpu/parallel.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cpu {
namespace {

struct BlasShape {
  int n, c, oc;
};

// The dimensions as BLAS takes them, once check_matmul_* has found each a positive int.
BlasShape blas_shape(std::size_t N, std::size_t C, std::size_t OC) {
  return {static_cast<int>(N), static_cast<int>(C), static_cast<int>(OC)};
}

}  // namespace

template <typename Scalar>
void matmul_forward(std::span<Scalar> out, std::span<const Scalar> inp, std::span<const Scalar> weight,
                    std::span<const Scalar> bias, std::size_t N, std::size_t C, std::size_t OC) {
  check_matmul_forward(out.size(), inp.size(), weight.size(), bias.size(), N, C, OC);
  const BlasShape s = blas_shape(N, C, OC);

  // beta = 0: BLAS overwrites out without reading it, so stale NaNs there cannot leak through.
  gemm(CblasNoTrans, CblasTrans, s.n, s.oc, s.c, Scalar{1}, inp.data(), s.c, weight.data(), s.c, Scalar{0},
       out.data(), s.oc);
  if (bias.empty()) return;
#pragma omp parallel for schedule(static) if (N * OC >= kMinParallelWork)
  for (std::size_t row = 0; row < N; ++row) {
    Scalar* y = out.data() + row * OC;
    for (std::size_t o = 0; o < OC; ++o) y[o] += bias[o];
  }
}

template <typename Scalar>
void matmul_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                     std::span<const Scalar> dout, std::span<const Scalar> inp, std::span<const Scalar> weight,
                     std::size_t N, std::size_t C, std::size_t OC) {
  matmul_backward(dinp, dweight, dbias, MatmulBackwardOperands<Scalar>{dout, weight, dout, inp, dout}, N, C, OC);
}

template <typename Scalar>
void matmul_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                     const MatmulBackwardOperands<Scalar>& operands, std::size_t N, std::size_t C, std::size_t OC) {
  const auto& [dout_dinp, weight, dout_dweight, inp, dout_dbias] = operands;
  check_matmul_backward(dinp.size(), dweight.size(), dbias.size(), dout_dinp.size(), weight.size(),
                        dout_dweight.size(), inp.size(), dout_dbias.size(), N, C, OC);
  const BlasShape s = blas_shape(N, C, OC);

  // beta = 1 accumulates, so residual branches and the tied wte/lm_head weight add up.
  gemm(CblasNoTrans, CblasNoTrans, s.n, s.c, s.oc, Scalar{1}, dout_dinp.data(), s.oc, weight.data(), s.c, Scalar{1},
       dinp.data(), s.c);
  gemm(CblasTrans, CblasNoTrans, s.oc, s.c, s.n, Scalar{1}, dout_dweight.data(), s.oc, inp.data(), s.c, Scalar{1},
       dweight.data(), s.c);
  if (dbias.empty()) return;
  // A plain variable: clang before 16 cannot capture a structured binding in a lambda.
  const Scalar* const dout_bias_rows = dout_dbias.data();
  for_each_column_block(OC, N * OC, [&](std::size_t begin, std::size_t end) {
    for (std::size_t row = 0; row < N; ++row) {
      const Scalar* dy = dout_bias_rows + row * OC;
      for (std::size_t o = begin; o < end; ++o) dbias[o] += dy[o];
    }
  });
}

template void matmul_forward<float>(std::span<float>, std::span<const float>, std::span<const float>,
                                    std::span<const float>, std::size_t, std::size_t, std::size_t);
template void matmul_forward<double>(std::span<double>, std::span<const double>, std::span<const double>,
                                     std::span<const double>, std::size_t, std::size_t, std::size_t);
template void matmul_backward<float>(std::span<float>, std::span<float>, std::span<float>, std::span<const float>,
                                     std::span<const float>, std::span<const float>, std::size_t, std::size_t,
                                     std::size_t);
template void matmul_backward<double>(std::span<double>, std::span<double>, std::span<double>, std::span<const double>,
                                      std::span<const double>, std::span<const double>, std::size_t, std::size_t,
                                      std::size_t);
template void matmul_backward<float>(std::span<float>, std::span<float>, std::span<float>,
                                     const MatmulBackwardOperands<float>&, std::size_t, std::size_t, std::size_t);
template void matmul_backward<double>(std::span<double>, std::span<double>, std::span<double>,
                                      const MatmulBackwardOperands<double>&, std::size_t, std::size_t, std::size_t);

}  // namespace altgrad::ops::cpu
