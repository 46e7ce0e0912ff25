#include "ops/cuda/rmsnorm.hpp"

#include "ops/cuda/cuda_error.cuh"
#include "ops/cuda/lane_group.cuh"
#include "ops/cuda/launch.cuh"
#include "ops/cuda/rmsnorm_math.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cuda {
namespace {

// One row per group of 16 threads; the CPU sums a row serially, so the group's leader does.
__global__ void rmsnorm_forward_kernel(float* out, float* rstd, const float* inp, const float* weight, std::size_t N,
                                       std::size_t C, float eps) {
  const LaneGroup group;
  for (std::size_t row = LaneGroup::index(); row < N; row += LaneGroup::count()) {
    rmsnorm_row_forward(group, out + row * C, rstd + row, inp + row * C, weight, C, eps);
  }
}

__global__ void rmsnorm_backward_rows_kernel(float* dinp, const float* dout, const float* inp, const float* weight,
                                             const float* rstd, std::size_t N, std::size_t C) {
  const LaneGroup group;
  for (std::size_t row = LaneGroup::index(); row < N; row += LaneGroup::count()) {
    rmsnorm_row_backward(group, dinp + row * C, dout + row * C, inp + row * C, weight, rstd[row], C);
  }
}

// dweight: one thread per column adds the rows in order (no atomics; the CPU's bits).
__global__ void rmsnorm_backward_columns_kernel(float* dweight, const float* dout, const float* inp, const float* rstd,
                                                std::size_t N, std::size_t C) {
  for (std::size_t c = thread_index(); c < C; c += grid_threads()) {
    float dw = dweight[c];
    for (std::size_t row = 0; row < N; ++row)
      dw += rmsnorm_dweight_term(inp[row * C + c], rstd[row], dout[row * C + c]);
    dweight[c] = dw;
  }
}

}  // namespace

void rmsnorm_forward(std::span<float> out, std::span<float> rstd, std::span<const float> inp,
                     std::span<const float> weight, std::size_t N, std::size_t C, float eps) {
  check_rmsnorm_forward(out.size(), rstd.size(), inp.size(), weight.size(), N, C);
  if (N == 0) return;

  rmsnorm_forward_kernel<<<blocks_for(N * kSumLanes), kBlockThreads>>>(out.data(), rstd.data(), inp.data(),
                                                                       weight.data(), N, C, eps);
  check_launch("rmsnorm_forward_kernel");
}

void rmsnorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<const float> dout,
                      std::span<const float> inp, std::span<const float> weight, std::span<const float> rstd,
                      std::size_t N, std::size_t C) {
  check_rmsnorm_backward(dinp.size(), dweight.size(), dout.size(), inp.size(), weight.size(), rstd.size(), N, C);
  if (N == 0) return;

  rmsnorm_backward_rows_kernel<<<blocks_for(N * kSumLanes), kBlockThreads>>>(dinp.data(), dout.data(), inp.data(),
                                                                             weight.data(), rstd.data(), N, C);
  check_launch("rmsnorm_backward_rows_kernel");
  rmsnorm_backward_columns_kernel<<<blocks_for(C), kBlockThreads>>>(dweight.data(), dout.data(), inp.data(),
                                                                    rstd.data(), N, C);
  check_launch("rmsnorm_backward_columns_kernel");
}

}  // namespace altgrad::ops::cuda
