#include "ops/cuda/matmul.hpp"

#include "ops/cpu/argument_checks.hpp"
#include "ops/cuda/cuda_error.cuh"
#include "ops/cuda/launch.cuh"

namespace altgrad::ops::cuda {
namespace {

using cpu::require_blas_dimension;
using cpu::require_size;
using cpu::require_size_or_empty;

// out (N, OC) += bias, after the GEMM, as the CPU adds it (one rounding of the product, then the sum).
__global__ void add_bias_kernel(float* out, const float* bias, std::size_t N, std::size_t OC) {
  for (std::size_t i = thread_index(); i < N * OC; i += grid_threads()) out[i] += bias[i % OC];
}

// dbias (OC) += Σ_rows dout: one thread per column adds the rows in order (no atomics; the CPU's bits).
__global__ void bias_backward_kernel(float* dbias, const float* dout, std::size_t N, std::size_t OC) {
  for (std::size_t o = thread_index(); o < OC; o += grid_threads()) {
    float sum = dbias[o];
    for (std::size_t row = 0; row < N; ++row) sum += dout[row * OC + o];
    dbias[o] = sum;
  }
}

// The CPU's checks: every dimension a positive BLAS integer.
void require_dimensions(const char* kernel, std::size_t N, std::size_t C, std::size_t OC) {
  require_blas_dimension(kernel, "N", N);
  require_blas_dimension(kernel, "C", C);
  require_blas_dimension(kernel, "OC", OC);
}

}  // namespace

void matmul_forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                    std::span<const float> bias, std::size_t N, std::size_t C, std::size_t OC, Gemm& gemm) {
  constexpr const char* kernel = "matmul_forward";
  require_dimensions(kernel, N, C, OC);
  require_size(kernel, "out", out.size(), N * OC);
  require_size(kernel, "inp", inp.size(), N * C);
  require_size(kernel, "weight", weight.size(), OC * C);
  require_size_or_empty(kernel, "bias", bias.size(), OC);

  // beta = 0: out is not read, so stale NaNs there cannot leak through.
  gemm(false, true, N, OC, C, 1.0f, inp.data(), C, weight.data(), C, 0.0f, out.data(), OC);
  if (bias.empty()) return;
  add_bias_kernel<<<blocks_for(N * OC), kBlockThreads>>>(out.data(), bias.data(), N, OC);
  check_launch("add_bias_kernel");
}

void matmul_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                     const MatmulBackwardOperands<float>& operands, std::size_t N, std::size_t C, std::size_t OC,
                     Gemm& gemm) {
  constexpr const char* kernel = "matmul_backward";
  require_dimensions(kernel, N, C, OC);
  const auto& [dout_dinp, weight, dout_dweight, inp, dout_dbias] = operands;
  require_size(kernel, "dinp", dinp.size(), N * C);
  require_size(kernel, "dweight", dweight.size(), OC * C);
  require_size_or_empty(kernel, "dbias", dbias.size(), OC);
  require_size(kernel, "dout for dinp", dout_dinp.size(), N * OC);
  require_size(kernel, "dout for dweight", dout_dweight.size(), N * OC);
  require_size(kernel, "inp", inp.size(), N * C);
  require_size(kernel, "weight", weight.size(), OC * C);
  if (!dbias.empty()) require_size(kernel, "dout for dbias", dout_dbias.size(), N * OC);

  // beta = 1 accumulates, so residual branches and the tied wte/lm_head weight add up.
  gemm(false, false, N, C, OC, 1.0f, dout_dinp.data(), OC, weight.data(), C, 1.0f, dinp.data(), C);
  gemm(true, false, OC, C, N, 1.0f, dout_dweight.data(), OC, inp.data(), C, 1.0f, dweight.data(), C);
  if (dbias.empty()) return;
  bias_backward_kernel<<<blocks_for(OC), kBlockThreads>>>(dbias.data(), dout_dbias.data(), N, OC);
  check_launch("bias_backward_kernel");
}

}  // namespace altgrad::ops::cuda
