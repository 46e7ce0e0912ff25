#include "ops/cuda/swiglu.hpp"

#include "ops/cuda/cuda_error.cuh"
#include "ops/cuda/launch.cuh"
#include "ops/cuda/swiglu_math.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cuda {
namespace {

// One thread per output element (row, i): a at row·2H + i, b H further.
__global__ void swiglu_forward_kernel(float* out, const float* inp, std::size_t N, std::size_t H) {
  for (std::size_t j = thread_index(); j < N * H; j += grid_threads()) {
    const float* a = inp + j / H * 2 * H + j % H;
    out[j] = swiglu_value(a[0], a[H]);
  }
}

__global__ void swiglu_backward_kernel(float* dinp, const float* inp, const float* dout, std::size_t N, std::size_t H) {
  for (std::size_t j = thread_index(); j < N * H; j += grid_threads()) {
    const std::size_t at = j / H * 2 * H + j % H;
    const SwigluGradient g = swiglu_gradient(inp[at], inp[at + H], dout[j]);
    dinp[at] = g.da;
    dinp[at + H] = g.db;
  }
}

}  // namespace

void swiglu_forward(std::span<float> out, std::span<const float> inp, std::size_t N, std::size_t H) {
  check_swiglu_forward(out.size(), inp.size(), N, H);
  if (out.empty()) return;
  swiglu_forward_kernel<<<blocks_for(N * H), kBlockThreads>>>(out.data(), inp.data(), N, H);
  check_launch("swiglu_forward_kernel");
}

void swiglu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout, std::size_t N,
                     std::size_t H) {
  check_swiglu_backward(dinp.size(), inp.size(), dout.size(), N, H);
  if (dout.empty()) return;
  swiglu_backward_kernel<<<blocks_for(N * H), kBlockThreads>>>(dinp.data(), inp.data(), dout.data(), N, H);
  check_launch("swiglu_backward_kernel");
}

}  // namespace altgrad::ops::cuda
