#include "ops/cuda/matmul.hpp"

#include "ops/cuda/cuda_error.cuh"
#include "ops/cuda/launch.cuh"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cuda {
namespace {

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

}  // namespace

void matmul_forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                    std::span<const float> bias, std::size_t N, std::size_t C, std::size_t OC, Gemm& gemm) {
  check_matmul_forward(out.size(), inp.size(), weight.size(), bias.size(), N, C, OC);

  // beta = 0: out is not read, so stale NaNs there cannot leak through.
  gemm(false, true, N, OC, C, 1.0f, inp.data(), C, weight.data(), C, 0.0f, out.data(), OC);
  if (bias.empty()) return;
  add_bias_kernel<<<blocks_for(N * OC), kBlockThreads>>>(out.data(), bias.data(), N, OC);
  check_launch("add_bias_kernel");
}

void matmul_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                     const MatmulBackwardOperands<float>& operands, std::size_t N, std::size_t C, std::size_t OC,
                     Gemm& gemm) {
  const auto& [dout_dinp, weight, dout_dweight, inp, dout_dbias] = operands;
  check_matmul_backward(dinp.size(), dweight.size(), dbias.size(), dout_dinp.size(), weight.size(),
                        dout_dweight.size(), inp.size(), dout_dbias.size(), N, C, OC);

  // beta = 1 accumulates, so residual branches and the tied wte/lm_head weight add up.
  gemm(false, false, N, C, OC, 1.0f, dout_dinp.data(), OC, weight.data(), C, 1.0f, dinp.data(), C);
  gemm(true, false, OC, C, N, 1.0f, dout_dweight.data(), OC, inp.data(), C, 1.0f, dweight.data(), C);
  if (dbias.empty()) return;
  bias_backward_kernel<<<blocks_for(OC), kBlockThreads>>>(dbias.data(), dout_dbias.data(), N, OC);
  check_launch("bias_backward_kernel");
}

}  // namespace altgrad::ops::cuda
