#include "ops/cuda/layernorm.hpp"

#include "ops/cuda/cuda_error.cuh"
#include "ops/cuda/lane_group.cuh"
#include "ops/cuda/launch.cuh"
#include "ops/cuda/layernorm_math.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cuda {
namespace {

// One row per group of 16 threads.
__global__ void layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                         const float* bias, std::size_t N, std::size_t C, float eps) {
  const LaneGroup group;
  for (std::size_t row = LaneGroup::index(); row < N; row += LaneGroup::count()) {
    layernorm_row_forward(group, out + row * C, mean + row, rstd + row, inp + row * C, weight, bias, C, eps);
  }
}

__global__ void layernorm_backward_rows_kernel(float* dinp, const float* dout, const float* inp, const float* weight,
                                               const float* mean, const float* rstd, std::size_t N, std::size_t C) {
  const LaneGroup group;
  for (std::size_t row = LaneGroup::index(); row < N; row += LaneGroup::count()) {
    layernorm_row_backward(group, dinp + row * C, dout + row * C, inp + row * C, weight, mean[row], rstd[row], C);
  }
}

// dweight and dbias are sums over rows: one thread per column adds the rows in order, as the CPU's
// column blocks do (no atomics; the same bits as the CPU).
__global__ void layernorm_backward_columns_kernel(float* dweight, float* dbias, const float* dout, const float* inp,
                                                  const float* mean, const float* rstd, std::size_t N, std::size_t C) {
  for (std::size_t c = thread_index(); c < C; c += grid_threads()) {
    float dw = dweight[c];
    float db = dbias != nullptr ? dbias[c] : 0.0f;
    for (std::size_t row = 0; row < N; ++row) {
      const float dy = dout[row * C + c];
      dw += layernorm_dweight_term(inp[row * C + c], mean[row], rstd[row], dy);
      db += dy;
    }
    dweight[c] = dw;
    if (dbias != nullptr) dbias[c] = db;
  }
}

}  // namespace

void layernorm_forward(std::span<float> out, std::span<float> mean, std::span<float> rstd, std::span<const float> inp,
                       std::span<const float> weight, std::span<const float> bias, std::size_t N, std::size_t C,
                       float eps) {
  check_layernorm_forward(out.size(), mean.size(), rstd.size(), inp.size(), weight.size(), bias.size(), N, C);
  if (N == 0) return;

  layernorm_forward_kernel<<<blocks_for(N * kSumLanes), kBlockThreads>>>(
      out.data(), mean.data(), rstd.data(), inp.data(), weight.data(), bias.empty() ? nullptr : bias.data(), N, C, eps);
  check_launch("layernorm_forward_kernel");
}

void layernorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                        std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                        std::span<const float> mean, std::span<const float> rstd, std::size_t N, std::size_t C) {
  check_layernorm_backward(dinp.size(), dweight.size(), dbias.size(), dout.size(), inp.size(), weight.size(),
                           mean.size(), rstd.size(), N, C);
  if (N == 0) return;

  layernorm_backward_rows_kernel<<<blocks_for(N * kSumLanes), kBlockThreads>>>(
      dinp.data(), dout.data(), inp.data(), weight.data(), mean.data(), rstd.data(), N, C);
  check_launch("layernorm_backward_rows_kernel");
  layernorm_backward_columns_kernel<<<blocks_for(C), kBlockThreads>>>(
      dweight.data(), dbias.empty() ? nullptr : dbias.data(), dout.data(), inp.data(), mean.data(), rstd.data(), N, C);
  check_launch("layernorm_backward_columns_kernel");
}

}  // namespace altgrad::ops::cuda
