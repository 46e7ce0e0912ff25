#include "ops/cuda/gelu.hpp"

#include "ops/cuda/cuda_error.cuh"
#include "ops/cuda/gelu_math.hpp"
#include "ops/cuda/launch.cuh"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cuda {
namespace {

// Each thread reads an element before it writes it, so out may be inp.
__global__ void gelu_forward_kernel(float* out, const float* inp, std::size_t n) {
  for (std::size_t i = thread_index(); i < n; i += grid_threads()) out[i] = gelu_value(inp[i]);
}

__global__ void gelu_backward_kernel(float* dinp, const float* inp, const float* dout, std::size_t n) {
  for (std::size_t i = thread_index(); i < n; i += grid_threads()) dinp[i] = gelu_gradient(inp[i], dout[i]);
}

}  // namespace

void gelu_forward(std::span<float> out, std::span<const float> inp) {
  check_gelu_forward(out.size(), inp.size());
  if (inp.empty()) return;
  gelu_forward_kernel<<<blocks_for(inp.size()), kBlockThreads>>>(out.data(), inp.data(), inp.size());
  check_launch("gelu_forward_kernel");
}

void gelu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout) {
  check_gelu_backward(dinp.size(), inp.size(), dout.size());
  if (inp.empty()) return;
  gelu_backward_kernel<<<blocks_for(inp.size()), kBlockThreads>>>(dinp.data(), inp.data(), dout.data(), inp.size());
  check_launch("gelu_backward_kernel");
}

}  // namespace altgrad::ops::cuda
