#include "ops/cpu/cpu_backend.hpp"

#include "ops/cpu/attention.hpp"
#include "ops/cpu/embedding.hpp"
#include "ops/cpu/gelu.hpp"
#include "ops/cpu/layernorm.hpp"
#include "ops/cpu/matmul.hpp"
#include "ops/cpu/residual.hpp"
#include "ops/cpu/rmsnorm.hpp"
#include "ops/cpu/softmax_cross_entropy.hpp"
#include "ops/cpu/swiglu.hpp"

namespace altgrad::ops::cpu {
namespace {

template <typename Scalar>
class CpuKernels final : public Kernels<Scalar> {
 public:
  void embedding_forward(std::span<Scalar> out, std::span<const std::int32_t> tokens, std::span<const Scalar> wte,
                         std::span<const Scalar> wpe, std::size_t B, std::size_t T, std::size_t C,
                         std::size_t V) override {
    cpu::embedding_forward(out, tokens, wte, wpe, B, T, C, V);
  }
  void embedding_backward(std::span<Scalar> dwte, std::span<Scalar> dwpe, std::span<const Scalar> dout,
                          std::span<const std::int32_t> tokens, std::size_t B, std::size_t T, std::size_t C,
                          std::size_t V) override {
    cpu::embedding_backward(dwte, dwpe, dout, tokens, B, T, C, V);
  }

  void layernorm_forward(std::span<Scalar> out, std::span<Scalar> mean, std::span<Scalar> rstd,
                         std::span<const Scalar> inp, std::span<const Scalar> weight, std::span<const Scalar> bias,
                         std::size_t N, std::size_t C, Scalar eps) override {
    cpu::layernorm_forward(out, mean, rstd, inp, weight, bias, N, C, eps);
  }
  void layernorm_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                          std::span<const Scalar> dout, std::span<const Scalar> inp, std::span<const Scalar> weight,
                          std::span<const Scalar> mean, std::span<const Scalar> rstd, std::size_t N,
                          std::size_t C) override {
    cpu::layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
  }
  void rmsnorm_forward(std::span<Scalar> out, std::span<Scalar> rstd, std::span<const Scalar> inp,
                       std::span<const Scalar> weight, std::size_t N, std::size_t C, Scalar eps) override {
    cpu::rmsnorm_forward(out, rstd, inp, weight, N, C, eps);
  }
  void rmsnorm_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<const Scalar> dout,
                        std::span<const Scalar> inp, std::span<const Scalar> weight, std::span<const Scalar> rstd,
                        std::size_t N, std::size_t C) override {
    cpu::rmsnorm_backward(dinp, dweight, dout, inp, weight, rstd, N, C);
  }

  void matmul_forward(std::span<Scalar> out, std::span<const Scalar> inp, std::span<const Scalar> weight,
                      std::span<const Scalar> bias, std::size_t N, std::size_t C, std::size_t OC) override {
    cpu::matmul_forward(out, inp, weight, bias, N, C, OC);
  }
  void matmul_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                       const MatmulBackwardOperands<Scalar>& operands, std::size_t N, std::size_t C,
                       std::size_t OC) override {
    cpu::matmul_backward(dinp, dweight, dbias, operands, N, C, OC);
  }
  void matmul_forward_emulated(std::span<Scalar> out, std::span<const Scalar> inp, std::span<const Scalar> weight,
                               std::span<const Scalar> bias, std::size_t N, std::size_t C, std::size_t OC,
                               const EmulatedGemm& forward) override {
    cpu::matmul_forward_emulated(out, inp, weight, bias, N, C, OC, forward);
  }
  void matmul_backward_emulated(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                                const MatmulBackwardOperands<Scalar>& operands, std::size_t N, std::size_t C,
                                std::size_t OC, const EmulatedGemm& dgrad, const EmulatedGemm& wgrad) override {
    cpu::matmul_backward_emulated(dinp, dweight, dbias, operands, N, C, OC, dgrad, wgrad);
  }

  void attention_forward(std::span<Scalar> out, std::span<Scalar> probs, std::span<const Scalar> qkv,
                         const AttentionShape& s) override {
    cpu::attention_forward(out, probs, qkv, s.B, s.T, s.C, s.NH);
  }
  void attention_probs_forward(std::span<Scalar> probs, std::span<const Scalar> qkv,
                               const AttentionShape& s) override {
    cpu::attention_probs_forward(probs, qkv, s.B, s.T, s.C, s.NH);
  }
  void attention_values_forward(std::span<Scalar> out, std::span<const Scalar> probs, std::span<const Scalar> qkv,
                                const AttentionShape& s) override {
    cpu::attention_values_forward(out, probs, qkv, s.B, s.T, s.C, s.NH);
  }
  void attention_backward(std::span<Scalar> dqkv, std::span<Scalar> dprobs, std::span<const Scalar> dout,
                          const AttentionOperands<Scalar>& used, std::span<const Scalar> probs,
                          const AttentionShape& s) override {
    cpu::attention_backward(dqkv, dprobs, dout, used, probs, s.B, s.T, s.C, s.NH);
  }
  void attention_probs_forward_emulated(std::span<Scalar> probs, std::span<const Scalar> qkv, const AttentionShape& s,
                                        const EmulatedGemm& scores) override {
    cpu::attention_probs_forward_emulated(probs, qkv, s.B, s.T, s.C, s.NH, scores);
  }
  void attention_values_forward_emulated(std::span<Scalar> out, std::span<const Scalar> probs,
                                         std::span<const Scalar> qkv, const AttentionShape& s,
                                         const EmulatedGemm& values) override {
    cpu::attention_values_forward_emulated(out, probs, qkv, s.B, s.T, s.C, s.NH, values);
  }

  void gelu_forward(std::span<Scalar> out, std::span<const Scalar> inp) override { cpu::gelu_forward(out, inp); }
  void gelu_backward(std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout) override {
    cpu::gelu_backward(dinp, inp, dout);
  }
  void swiglu_forward(std::span<Scalar> out, std::span<const Scalar> inp, std::size_t N, std::size_t H) override {
    cpu::swiglu_forward(out, inp, N, H);
  }
  void swiglu_backward(std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout,
                       std::size_t N, std::size_t H) override {
    cpu::swiglu_backward(dinp, inp, dout, N, H);
  }

  void residual_forward(std::span<Scalar> out, std::span<const Scalar> a, std::span<const Scalar> b) override {
    cpu::residual_forward(out, a, b);
  }

  void softmax_cross_entropy_forward(std::span<Scalar> losses, std::span<Scalar> probs, std::span<const Scalar> logits,
                                     std::span<const std::int32_t> targets, std::size_t N, std::size_t V) override {
    cpu::softmax_cross_entropy_forward(losses, probs, logits, targets, N, V);
  }
  void softmax_cross_entropy_backward(std::span<Scalar> dlogits, std::span<const Scalar> dlosses,
                                      std::span<const Scalar> probs, std::span<const std::int32_t> targets,
                                      std::size_t N, std::size_t V) override {
    cpu::softmax_cross_entropy_backward(dlogits, dlosses, probs, targets, N, V);
  }
};

}  // namespace

template <typename Scalar>
Kernels<Scalar>& kernels() {
  static CpuKernels<Scalar> instance;
  return instance;
}

template Kernels<float>& kernels<float>();
template Kernels<double>& kernels<double>();

}  // namespace altgrad::ops::cpu
