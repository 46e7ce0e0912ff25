#pragma once
// The GPT: parameters and their gradients in one contiguous buffer each (parameter_layout.hpp),
// and nanoGPT's forward and backward passes spelled out over one backend's kernels, llm.c-style
// (ops/backend.hpp: the CPU reference unless the model is made for another device).
//
//   x = wte[tokens] + wpe[0..T)
//   for each block:  x = x + attn.c_proj(attention(attn.c_attn(ln_1(x))))
//                    x = x + mlp.c_proj(act(mlp.c_fc(ln_2(x))))      act: exact GELU or SwiGLU
//   logits = ln_f(x) · wteᵀ                                          lm_head tied to wte
//   loss = mean over (b, t) of cross_entropy(logits[b, t], targets[b, t])
//
// Scalar is float for training and double for gradient checks.
//
// Every buffer (parameters, gradients, Activations) lies in the backend's memory: host memory for
// the CPU, whose spans the caller may read and write, device memory for CUDA, which moves to and
// from the host only through ops::upload and ops::download.
#include <cstdint>
#include <span>
#include <string_view>

#include "model/activations.hpp"
#include "model/config.hpp"
#include "model/matmul_hooks.hpp"
#include "model/matmul_points.hpp"
#include "model/parameter_layout.hpp"
#include "ops/backend.hpp"

namespace altgrad::model {

template <typename Scalar>
class Gpt {
 public:
  // Validates the config (std::invalid_argument). Parameters and gradients start at zero; call
  // initialize() or load a checkpoint into parameters().
  explicit Gpt(const GptConfig& config, ops::Backend<Scalar> backend = ops::cpu_backend<Scalar>());

  const GptConfig& config() const { return layout_.config(); }
  const ParameterLayout& layout() const { return layout_; }
  const MatmulPoints& matmuls() const { return matmuls_; }
  // The backend the passes run on; its memory holds the buffers below and the Activations' own.
  const ops::Backend<Scalar>& backend() const { return backend_; }

  // The whole buffers, layout().size() elements each; gradients mirror parameters slot for slot.
  std::span<Scalar> parameters() { return parameters_.span(); }
  std::span<const Scalar> parameters() const { return parameters_.span(); }
  std::span<Scalar> gradients() { return gradients_.span(); }
  std::span<const Scalar> gradients() const { return gradients_.span(); }

  // One tensor by state_dict name (lm_head.weight gives wte's storage). Throws std::out_of_range
  // for an unknown name.
  std::span<Scalar> parameter(std::string_view name) { return layout_.at(name).slot.in(parameters()); }
  std::span<const Scalar> parameter(std::string_view name) const { return layout_.at(name).slot.in(parameters()); }
  std::span<Scalar> gradient(std::string_view name) { return layout_.at(name).slot.in(gradients()); }
  std::span<const Scalar> gradient(std::string_view name) const { return layout_.at(name).slot.in(gradients()); }

  // nanoGPT's initialization from a seed (init.hpp).
  void initialize(std::uint64_t seed);
  // Backward passes add to the gradients (gradient accumulation); zero them before a step.
  void zero_gradients();

 private:
  ParameterLayout layout_;
  MatmulPoints matmuls_;
  ops::Backend<Scalar> backend_;
  ops::Buffer<Scalar> parameters_;
  ops::Buffer<Scalar> gradients_;
};

// Runs the forward pass for tokens (B, T) on the shape `acts` was made for, and returns the mean
// cross-entropy loss against targets (B, T). With empty targets only the logits are computed and
// the result is NaN. Each matmul operand passes `hooks` (null: none); hooks need Activations made
// with OperandCopies::allocated. Throws std::invalid_argument for wrong sizes, a token or target
// outside [0, vocab_size), or Activations made for another config or in another backend's memory;
// allocates nothing.
template <typename Scalar>
Scalar gpt_forward(const Gpt<Scalar>& model, Activations<Scalar>& acts, std::span<const std::int32_t> tokens,
                   std::span<const std::int32_t> targets, MatmulHooks<Scalar>* hooks = nullptr);

// Adds d(mean loss)/d(parameter) of the last forward pass to model.gradients(); the tied
// wte/lm_head weight gets both its embedding and its output-layer contribution. The forward pass
// must have had targets and run on these parameters. `hooks` sees the :grad points; the :act and
// :weight operands and the attention operands (q, k, v, probs) are those the forward pass used.
// Allocates nothing.
template <typename Scalar>
void gpt_backward(Gpt<Scalar>& model, Activations<Scalar>& acts, MatmulHooks<Scalar>* hooks = nullptr);

}  // namespace altgrad::model
