#include "ops/cpu/matmul.hpp"

#include <stdexcept>
#include <type_traits>

#include "ops/cpu/emulated_gemm.hpp"
#include "ops/cpu/emulated_operands.hpp"
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

namespace {

// dinp += dout · weight; beta = 1 accumulates, so residual branches and the tied wte/lm_head weight
// add up.
template <typename Scalar>
void float_dgrad(std::span<Scalar> dinp, std::span<const Scalar> dout, std::span<const Scalar> weight,
                 const BlasShape& s) {
  gemm(CblasNoTrans, CblasNoTrans, s.n, s.c, s.oc, Scalar{1}, dout.data(), s.oc, weight.data(), s.c, Scalar{1},
       dinp.data(), s.c);
}

// dweight += doutᵀ · inp.
template <typename Scalar>
void float_wgrad(std::span<Scalar> dweight, std::span<const Scalar> dout, std::span<const Scalar> inp,
                 const BlasShape& s) {
  gemm(CblasTrans, CblasNoTrans, s.oc, s.c, s.n, Scalar{1}, dout.data(), s.oc, inp.data(), s.c, Scalar{1},
       dweight.data(), s.c);
}

// dbias += Σ_rows dout (nothing without a bias).
template <typename Scalar>
void bias_gradient(std::span<Scalar> dbias, const Scalar* dout, std::size_t N, std::size_t OC) {
  if (dbias.empty()) return;
  for_each_column_block(OC, N * OC, [&](std::size_t begin, std::size_t end) {
    for (std::size_t row = 0; row < N; ++row) {
      const Scalar* dy = dout + row * OC;
      for (std::size_t o = begin; o < end; ++o) dbias[o] += dy[o];
    }
  });
}

}  // namespace

template <typename Scalar>
void matmul_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                     const MatmulBackwardOperands<Scalar>& operands, std::size_t N, std::size_t C, std::size_t OC) {
  const auto& [dout_dinp, weight, dout_dweight, inp, dout_dbias] = operands;
  check_matmul_backward(dinp.size(), dweight.size(), dbias.size(), dout_dinp.size(), weight.size(),
                        dout_dweight.size(), inp.size(), dout_dbias.size(), N, C, OC);
  const BlasShape s = blas_shape(N, C, OC);
  float_dgrad(dinp, dout_dinp, weight, s);
  float_wgrad(dweight, dout_dweight, inp, s);
  bias_gradient(dbias, dout_dbias.data(), N, OC);
}

template <typename Scalar>
void matmul_forward_emulated(std::span<Scalar> out, std::span<const Scalar> inp, std::span<const Scalar> weight,
                             std::span<const Scalar> bias, std::size_t N, std::size_t C, std::size_t OC,
                             const EmulatedGemm& forward) {
  if (forward.model == nullptr) return matmul_forward(out, inp, weight, bias, N, C, OC);
  require_float<Scalar>();
  if constexpr (std::is_same_v<Scalar, float>) {
    check_matmul_forward(out.size(), inp.size(), weight.size(), bias.size(), N, C, OC);
    // A = inp (N, C); B = weightᵀ: element (c, o) at weight[o · C + c].
    emulated_gemm(*forward.model, N, OC, C, emulated_operand(inp.data(), C, 1, forward.a),
                  emulated_operand(weight.data(), 1, C, forward.b), dequantization(forward), false, out.data(), OC);
    if (bias.empty()) return;
#pragma omp parallel for schedule(static) if (N * OC >= kMinParallelWork)
    for (std::size_t row = 0; row < N; ++row) {
      float* y = out.data() + row * OC;
      for (std::size_t o = 0; o < OC; ++o) y[o] += bias[o];
    }
  }
}

template <typename Scalar>
void matmul_backward_emulated(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                              const MatmulBackwardOperands<Scalar>& operands, std::size_t N, std::size_t C,
                              std::size_t OC, const EmulatedGemm& dgrad, const EmulatedGemm& wgrad) {
  if (dgrad.model == nullptr && wgrad.model == nullptr) return matmul_backward(dinp, dweight, dbias, operands, N, C, OC);
  require_float<Scalar>();
  if constexpr (std::is_same_v<Scalar, float>) {
    const auto& [dout_dinp, weight, dout_dweight, inp, dout_dbias] = operands;
    check_matmul_backward(dinp.size(), dweight.size(), dbias.size(), dout_dinp.size(), weight.size(),
                          dout_dweight.size(), inp.size(), dout_dbias.size(), N, C, OC);
    const BlasShape s = blas_shape(N, C, OC);
    if (dgrad.model == nullptr) {
      float_dgrad(dinp, dout_dinp, weight, s);
    } else {  // dinp (N, C) += dout (N, OC) · weight (OC, C)
      emulated_gemm(*dgrad.model, N, C, OC, emulated_operand(dout_dinp.data(), OC, 1, dgrad.a),
                    emulated_operand(weight.data(), C, 1, dgrad.b), dequantization(dgrad), true, dinp.data(), C);
    }
    if (wgrad.model == nullptr) {
      float_wgrad(dweight, dout_dweight, inp, s);
    } else {  // dweight (OC, C) += doutᵀ (OC, N) · inp (N, C)
      emulated_gemm(*wgrad.model, OC, C, N, emulated_operand(dout_dweight.data(), 1, OC, wgrad.a),
                    emulated_operand(inp.data(), C, 1, wgrad.b), dequantization(wgrad), true, dweight.data(), C);
    }
    bias_gradient(dbias, dout_dbias.data(), N, OC);
  }
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
template void matmul_forward_emulated<float>(std::span<float>, std::span<const float>, std::span<const float>,
                                             std::span<const float>, std::size_t, std::size_t, std::size_t,
                                             const EmulatedGemm&);
template void matmul_forward_emulated<double>(std::span<double>, std::span<const double>, std::span<const double>,
                                              std::span<const double>, std::size_t, std::size_t, std::size_t,
                                              const EmulatedGemm&);
template void matmul_backward_emulated<float>(std::span<float>, std::span<float>, std::span<float>,
                                              const MatmulBackwardOperands<float>&, std::size_t, std::size_t,
                                              std::size_t, const EmulatedGemm&, const EmulatedGemm&);
template void matmul_backward_emulated<double>(std::span<double>, std::span<double>, std::span<double>,
                                               const MatmulBackwardOperands<double>&, std::size_t, std::size_t,
                                               std::size_t, const EmulatedGemm&, const EmulatedGemm&);

}  // namespace altgrad::ops::cpu
