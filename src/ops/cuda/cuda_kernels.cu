// The CUDA backend: the Kernels interface (ops/kernels.hpp) wired to the launchers of ops/cuda/,
// and the process-wide instance of cuda_backend.hpp.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "ops/cuda/attention.hpp"
#include "ops/cuda/cuda_backend.hpp"
#include "ops/cuda/cuda_memory.hpp"
#include "ops/cuda/device_scratch.hpp"
#include "ops/cuda/embedding.hpp"
#include "ops/cuda/gelu.hpp"
#include "ops/cuda/gemm.hpp"
#include "ops/cuda/index_check.hpp"
#include "ops/cuda/layernorm.hpp"
#include "ops/cuda/matmul.hpp"
#include "ops/cuda/residual.hpp"
#include "ops/cuda/rmsnorm.hpp"
#include "ops/cuda/softmax_cross_entropy.hpp"
#include "ops/cuda/swiglu.hpp"

namespace altgrad::ops::cuda {
namespace {

class CudaKernels final : public Kernels<float> {
 public:
  void embedding_forward(std::span<float> out, std::span<const std::int32_t> tokens, std::span<const float> wte,
                         std::span<const float> wpe, std::size_t B, std::size_t T, std::size_t C,
                         std::size_t V) override {
    cuda::embedding_forward(out, tokens, wte, wpe, B, T, C, V, index_check_);
  }
  void embedding_backward(std::span<float> dwte, std::span<float> dwpe, std::span<const float> dout,
                          std::span<const std::int32_t> tokens, std::size_t B, std::size_t T, std::size_t C,
                          std::size_t V) override {
    cuda::embedding_backward(dwte, dwpe, dout, tokens, B, T, C, V, index_check_, token_links_);
  }

  void layernorm_forward(std::span<float> out, std::span<float> mean, std::span<float> rstd, std::span<const float> inp,
                         std::span<const float> weight, std::span<const float> bias, std::size_t N, std::size_t C,
                         float eps) override {
    cuda::layernorm_forward(out, mean, rstd, inp, weight, bias, N, C, eps);
  }
  void layernorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                          std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                          std::span<const float> mean, std::span<const float> rstd, std::size_t N,
                          std::size_t C) override {
    cuda::layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
  }
  void rmsnorm_forward(std::span<float> out, std::span<float> rstd, std::span<const float> inp,
                       std::span<const float> weight, std::size_t N, std::size_t C, float eps) override {
    cuda::rmsnorm_forward(out, rstd, inp, weight, N, C, eps);
  }
  void rmsnorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<const float> dout,
                        std::span<const float> inp, std::span<const float> weight, std::span<const float> rstd,
                        std::size_t N, std::size_t C) override {
    cuda::rmsnorm_backward(dinp, dweight, dout, inp, weight, rstd, N, C);
  }

  void matmul_forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                      std::span<const float> bias, std::size_t N, std::size_t C, std::size_t OC) override {
    cuda::matmul_forward(out, inp, weight, bias, N, C, OC, gemm_);
  }
  void matmul_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                       const MatmulBackwardOperands<float>& operands, std::size_t N, std::size_t C,
                       std::size_t OC) override {
    cuda::matmul_backward(dinp, dweight, dbias, operands, N, C, OC, gemm_);
  }

  void attention_forward(std::span<float> out, std::span<float> probs, std::span<const float> qkv,
                         const AttentionShape& s) override {
    cuda::attention_forward(out, probs, qkv, s.B, s.T, s.C, s.NH);
  }
  void attention_probs_forward(std::span<float> probs, std::span<const float> qkv, const AttentionShape& s) override {
    cuda::attention_probs_forward(probs, qkv, s.B, s.T, s.C, s.NH);
  }
  void attention_values_forward(std::span<float> out, std::span<const float> probs, std::span<const float> qkv,
                                const AttentionShape& s) override {
    cuda::attention_values_forward(out, probs, qkv, s.B, s.T, s.C, s.NH);
  }
  void attention_backward(std::span<float> dqkv, std::span<float> dprobs, std::span<const float> dout,
                          const AttentionOperands<float>& used, std::span<const float> probs,
                          const AttentionShape& s) override {
    cuda::attention_backward(dqkv, dprobs, dout, used, probs, s.B, s.T, s.C, s.NH);
  }

  void gelu_forward(std::span<float> out, std::span<const float> inp) override { cuda::gelu_forward(out, inp); }
  void gelu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout) override {
    cuda::gelu_backward(dinp, inp, dout);
  }
  void swiglu_forward(std::span<float> out, std::span<const float> inp, std::size_t N, std::size_t H) override {
    cuda::swiglu_forward(out, inp, N, H);
  }
  void swiglu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout, std::size_t N,
                       std::size_t H) override {
    cuda::swiglu_backward(dinp, inp, dout, N, H);
  }

  void residual_forward(std::span<float> out, std::span<const float> a, std::span<const float> b) override {
    cuda::residual_forward(out, a, b);
  }

  void softmax_cross_entropy_forward(std::span<float> losses, std::span<float> probs, std::span<const float> logits,
                                     std::span<const std::int32_t> targets, std::size_t N, std::size_t V) override {
    cuda::softmax_cross_entropy_forward(losses, probs, logits, targets, N, V, index_check_);
  }
  void softmax_cross_entropy_backward(std::span<float> dlogits, std::span<const float> dlosses,
                                      std::span<const float> probs, std::span<const std::int32_t> targets,
                                      std::size_t N, std::size_t V) override {
    cuda::softmax_cross_entropy_backward(dlogits, dlosses, probs, targets, N, V, index_check_);
  }

 private:
  Gemm gemm_;
  IndexCheck index_check_;
  DeviceScratch token_links_;
};

// Before any other CUDA call: a process without a GPU (or without a driver) gets a message that
// says so, rather than the first failing library call's.
int require_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("no CUDA device: cudaGetDeviceCount failed: ") + cudaGetErrorString(status));
  }
  if (count == 0) throw std::runtime_error("no CUDA device: cudaGetDeviceCount found none");
  return count;
}

// Members in order: the device check first. The engine outlives every Buffer a caller holds only
// if it is made before them, which the first backend() call does.
struct Engine {
  int devices = require_device();
  CudaMemory memory;
  CudaKernels kernels;
};

}  // namespace

Backend<float> backend() {
  // A constructor that throws leaves the static unmade, and the next call tries again.
  static Engine engine;
  return {Device::cuda, &engine.memory, &engine.kernels};
}

}  // namespace altgrad::ops::cuda
