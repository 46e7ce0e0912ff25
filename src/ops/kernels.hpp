#pragma once
// The layer kernels one backend implements: the whole list the model calls, forward and backward,
// as ggml's backends implement one op list. Each function means exactly what the CPU reference of
// the same name documents (ops/cpu/<layer>.hpp: shapes, what is overwritten and what is added to,
// which arguments may alias); that file is the specification, and a backend is held to it by the
// tests that run every kernel of every backend against the CPU's (tests/ops/backend_parity_test.cpp).
//
// Every span lies in memory of this backend's Memory (ops/memory.hpp): host memory for the CPU,
// device memory for CUDA. Shapes: N = B·T rows, C channels, OC output features, NH heads, V vocabulary.
// Throws std::invalid_argument on a size mismatch: each kernel's checks, the same for every backend,
// are ops/kernel_arguments.hpp.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>

#include "ops/operands.hpp"

namespace altgrad::ops {

// The shape of one causal self-attention call.
struct AttentionShape {
  std::size_t B, T, C, NH;
};

inline constexpr const char* kNoEmulatedGemms =
    "this backend has no emulated GEMM accumulation (docs/accumulation.md): run on the CPU backend";

template <typename Scalar>
class Kernels {
 public:
  virtual ~Kernels() = default;

  // ops/cpu/embedding.hpp: out (B, T, C) = wte[tokens] + wpe[t]; tokens (B, T) in this memory.
  virtual void embedding_forward(std::span<Scalar> out, std::span<const std::int32_t> tokens,
                                 std::span<const Scalar> wte, std::span<const Scalar> wpe, std::size_t B,
                                 std::size_t T, std::size_t C, std::size_t V) = 0;
  virtual void embedding_backward(std::span<Scalar> dwte, std::span<Scalar> dwpe, std::span<const Scalar> dout,
                                  std::span<const std::int32_t> tokens, std::size_t B, std::size_t T, std::size_t C,
                                  std::size_t V) = 0;

  // ops/cpu/layernorm.hpp and ops/cpu/rmsnorm.hpp; bias may be empty.
  virtual void layernorm_forward(std::span<Scalar> out, std::span<Scalar> mean, std::span<Scalar> rstd,
                                 std::span<const Scalar> inp, std::span<const Scalar> weight,
                                 std::span<const Scalar> bias, std::size_t N, std::size_t C, Scalar eps) = 0;
  virtual void layernorm_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                                  std::span<const Scalar> dout, std::span<const Scalar> inp,
                                  std::span<const Scalar> weight, std::span<const Scalar> mean,
                                  std::span<const Scalar> rstd, std::size_t N, std::size_t C) = 0;
  virtual void rmsnorm_forward(std::span<Scalar> out, std::span<Scalar> rstd, std::span<const Scalar> inp,
                               std::span<const Scalar> weight, std::size_t N, std::size_t C, Scalar eps) = 0;
  virtual void rmsnorm_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<const Scalar> dout,
                                std::span<const Scalar> inp, std::span<const Scalar> weight,
                                std::span<const Scalar> rstd, std::size_t N, std::size_t C) = 0;

  // ops/cpu/matmul.hpp: out (N, OC) = inp (N, C) · weight (OC, C)ᵀ + bias (OC, or empty).
  virtual void matmul_forward(std::span<Scalar> out, std::span<const Scalar> inp, std::span<const Scalar> weight,
                              std::span<const Scalar> bias, std::size_t N, std::size_t C, std::size_t OC) = 0;
  virtual void matmul_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                               const MatmulBackwardOperands<Scalar>& operands, std::size_t N, std::size_t C,
                               std::size_t OC) = 0;

  // ops/cpu/matmul.hpp: the same with GEMMs that emulate a tensor core's accumulation where the
  // EmulatedGemm names a model (the others as above). A backend without emulated GEMMs throws
  // std::logic_error naming itself.
  virtual void matmul_forward_emulated(std::span<Scalar> out, std::span<const Scalar> inp,
                                       std::span<const Scalar> weight, std::span<const Scalar> bias, std::size_t N,
                                       std::size_t C, std::size_t OC, const EmulatedGemm& forward) {
    (void)out, (void)inp, (void)weight, (void)bias, (void)N, (void)C, (void)OC, (void)forward;
    throw std::logic_error(kNoEmulatedGemms);
  }
  virtual void matmul_backward_emulated(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                                        const MatmulBackwardOperands<Scalar>& operands, std::size_t N, std::size_t C,
                                        std::size_t OC, const EmulatedGemm& dgrad, const EmulatedGemm& wgrad) {
    (void)dinp, (void)dweight, (void)dbias, (void)operands, (void)N, (void)C, (void)OC, (void)dgrad, (void)wgrad;
    throw std::logic_error(kNoEmulatedGemms);
  }

  // ops/cpu/attention.hpp: the whole forward pass, or its two halves (probs, then out) so that a
  // caller may rewrite the probabilities in between; the backward pass with the operands the
  // products read (`used`) and the probabilities the softmax produced.
  virtual void attention_forward(std::span<Scalar> out, std::span<Scalar> probs, std::span<const Scalar> qkv,
                                 const AttentionShape& shape) = 0;
  virtual void attention_probs_forward(std::span<Scalar> probs, std::span<const Scalar> qkv,
                                       const AttentionShape& shape) = 0;
  virtual void attention_values_forward(std::span<Scalar> out, std::span<const Scalar> probs,
                                        std::span<const Scalar> qkv, const AttentionShape& shape) = 0;
  virtual void attention_backward(std::span<Scalar> dqkv, std::span<Scalar> dprobs, std::span<const Scalar> dout,
                                  const AttentionOperands<Scalar>& used, std::span<const Scalar> probs,
                                  const AttentionShape& shape) = 0;

  // ops/cpu/attention.hpp: the two halves with their product under an accumulator model where the
  // EmulatedGemm names one (A and B: q and k, probs and v). A backend without emulated GEMMs throws
  // std::logic_error naming itself.
  virtual void attention_probs_forward_emulated(std::span<Scalar> probs, std::span<const Scalar> qkv,
                                                const AttentionShape& shape, const EmulatedGemm& scores) {
    (void)probs, (void)qkv, (void)shape, (void)scores;
    throw std::logic_error(kNoEmulatedGemms);
  }
  virtual void attention_values_forward_emulated(std::span<Scalar> out, std::span<const Scalar> probs,
                                                 std::span<const Scalar> qkv, const AttentionShape& shape,
                                                 const EmulatedGemm& values) {
    (void)out, (void)probs, (void)qkv, (void)shape, (void)values;
    throw std::logic_error(kNoEmulatedGemms);
  }

  // ops/cpu/gelu.hpp and ops/cpu/swiglu.hpp.
  virtual void gelu_forward(std::span<Scalar> out, std::span<const Scalar> inp) = 0;
  virtual void gelu_backward(std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout) = 0;
  virtual void swiglu_forward(std::span<Scalar> out, std::span<const Scalar> inp, std::size_t N, std::size_t H) = 0;
  virtual void swiglu_backward(std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout,
                               std::size_t N, std::size_t H) = 0;

  // ops/cpu/residual.hpp: out = a + b.
  virtual void residual_forward(std::span<Scalar> out, std::span<const Scalar> a, std::span<const Scalar> b) = 0;

  // ops/cpu/softmax_cross_entropy.hpp; targets (N) in this memory.
  virtual void softmax_cross_entropy_forward(std::span<Scalar> losses, std::span<Scalar> probs,
                                             std::span<const Scalar> logits, std::span<const std::int32_t> targets,
                                             std::size_t N, std::size_t V) = 0;
  virtual void softmax_cross_entropy_backward(std::span<Scalar> dlogits, std::span<const Scalar> dlosses,
                                              std::span<const Scalar> probs, std::span<const std::int32_t> targets,
                                              std::size_t N, std::size_t V) = 0;
};

}  // namespace altgrad::ops
