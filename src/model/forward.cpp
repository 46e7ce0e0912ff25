// gpt_forward: nanoGPT's GPT.forward with targets, over the model's backend (see gpt.hpp).
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "model/gpt.hpp"
#include "model/linear.hpp"
#include "model/mlp_activation.hpp"
#include "model/norm.hpp"
#include "model/self_attention.hpp"

namespace altgrad::model {
namespace {

template <typename Scalar>
void check_forward_arguments(const Gpt<Scalar>& model, const Activations<Scalar>& acts,
                             std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                             const MatmulHooks<Scalar>* hooks) {
  if (!(acts.config == model.config())) {
    throw std::invalid_argument("gpt_forward: the Activations were made for a different GptConfig");
  }
  if (&acts.storage.memory() != model.backend().memory) {
    throw std::invalid_argument("gpt_forward: the Activations are in " + std::string(acts.storage.memory().name()) +
                                " memory, the model's backend computes in " +
                                std::string(model.backend().memory->name()) + " memory");
  }
  const std::size_t N = acts.B * acts.T;
  if (tokens.size() != N) {
    throw std::invalid_argument("gpt_forward: " + std::to_string(tokens.size()) +
                                " tokens, the Activations are for B·T = " + std::to_string(N));
  }
  if (!targets.empty() && targets.size() != N) {
    throw std::invalid_argument("gpt_forward: " + std::to_string(targets.size()) +
                                " targets, expected none or B·T = " + std::to_string(N));
  }
  if (hooks != nullptr && acts.copies != OperandCopies::allocated) {
    throw std::invalid_argument(
        "gpt_forward: matmul hooks need room for hooked operands; make the Activations with "
        "OperandCopies::allocated");
  }
}

// One transformer block: residual (B, T, C) in, layers[layer].residual3 out.
template <typename Scalar>
void block_forward(const Gpt<Scalar>& model, Activations<Scalar>& acts, std::size_t layer,
                   std::span<const Scalar> residual, MatmulHooks<Scalar>* hooks) {
  const GptConfig& config = model.config();
  ops::Memory& memory = *model.backend().memory;
  ops::Kernels<Scalar>& kernels = *model.backend().kernels;
  const std::span<const Scalar> params = model.parameters();
  const BlockSlots& p = model.layout().block(layer);
  LayerActivations<Scalar>& l = acts.layers[layer];
  const std::size_t B = acts.B, T = acts.T, N = B * T, C = config.n_embd, H = hidden_size(config);
  // out = inp · Wᵀ + bias through the hooks; what the GEMM read is kept for the backward pass.
  const auto linear = [&](BlockMatmul m, std::span<Scalar> out, std::span<const Scalar> inp, Slot weight, Slot bias,
                          std::span<Scalar> inp_copy) {
    const std::span<Scalar> weight_copy = hooks != nullptr ? weight.in(acts.hooked_weights) : std::span<Scalar>{};
    l.used[static_cast<std::size_t>(m)] =
        linear_forward<Scalar>(kernels, out, inp, weight.in(params), bias.in(params), inp_copy, weight_copy,
                               model.matmuls().block(layer, m), hooks, N, acts.inp_hooked_scratch);
  };

  // x + attn(ln_1(x))
  norm_forward<Scalar>(kernels, config.norm, l.ln_1, l.ln_1_mean, l.ln_1_rstd, residual, p.ln_1_weight.in(params),
                       p.ln_1_bias.in(params), N, C);
  linear(BlockMatmul::attn_c_attn, l.qkv, l.ln_1, p.attn_c_attn_weight, p.attn_c_attn_bias, l.ln_1_hooked);
  const AttentionCopies<Scalar> attention_copies{&memory, l.qkv_hooked, l.att_probs_hooked, acts.qkv_third,
                                                 acts.qkv_third_hooked};
  l.attention_used = self_attention_forward<Scalar>(kernels, l.att_y, l.att_probs, l.qkv, attention_copies,
                                                    model.matmuls(), layer, hooks, {B, T, C, config.n_head});
  linear(BlockMatmul::attn_c_proj, l.att_proj, l.att_y, p.attn_c_proj_weight, p.attn_c_proj_bias, l.att_y_hooked);
  kernels.residual_forward(l.residual2, residual, l.att_proj);

  // x + mlp(ln_2(x))
  norm_forward<Scalar>(kernels, config.norm, l.ln_2, l.ln_2_mean, l.ln_2_rstd, l.residual2, p.ln_2_weight.in(params),
                       p.ln_2_bias.in(params), N, C);
  linear(BlockMatmul::mlp_c_fc, l.fc, l.ln_2, p.mlp_c_fc_weight, p.mlp_c_fc_bias, l.ln_2_hooked);
  mlp_activation_forward<Scalar>(kernels, config.mlp, l.fc_act, l.fc, N, H);
  linear(BlockMatmul::mlp_c_proj, l.fc_proj, l.fc_act, p.mlp_c_proj_weight, p.mlp_c_proj_bias, l.fc_act_hooked);
  kernels.residual_forward(l.residual3, l.residual2, l.fc_proj);
}

}  // namespace

template <typename Scalar>
Scalar gpt_forward(const Gpt<Scalar>& model, Activations<Scalar>& acts, std::span<const std::int32_t> tokens,
                   std::span<const std::int32_t> targets, MatmulHooks<Scalar>* hooks) {
  check_forward_arguments(model, acts, tokens, targets, hooks);
  const GptConfig& config = model.config();
  const ParameterLayout& layout = model.layout();
  ops::Memory& memory = *model.backend().memory;
  ops::Kernels<Scalar>& kernels = *model.backend().kernels;
  const std::span<const Scalar> params = model.parameters();
  const std::size_t B = acts.B, T = acts.T, N = B * T, C = config.n_embd, V = config.vocab_size;

  ops::upload(memory, acts.tokens.span(), tokens);
  acts.has_targets = false;

  // Only the first T rows of the position table are used (nanoGPT's wpe(arange(T))).
  kernels.embedding_forward(acts.encoded, acts.tokens.span(), layout.wte().in(params),
                            layout.wpe().in(params).first(T * C), B, T, C, V);
  std::span<const Scalar> residual = acts.encoded;
  for (std::size_t layer = 0; layer < config.n_layer; ++layer) {
    block_forward(model, acts, layer, residual, hooks);
    residual = acts.layers[layer].residual3;
  }

  norm_forward<Scalar>(kernels, config.norm, acts.ln_f, acts.ln_f_mean, acts.ln_f_rstd, residual,
                       layout.ln_f_weight().in(params), layout.ln_f_bias().in(params), N, C);
  const std::span<Scalar> hooked_wte =
      hooks != nullptr ? layout.lm_head().in(acts.hooked_weights) : std::span<Scalar>{};
  acts.lm_head_used =
      linear_forward<Scalar>(kernels, acts.logits, acts.ln_f, layout.lm_head().in(params), {}, acts.ln_f_hooked,
                             hooked_wte, model.matmuls().lm_head(), hooks, N, acts.inp_hooked_scratch);

  if (targets.empty()) {
    acts.mean_loss = std::numeric_limits<Scalar>::quiet_NaN();
    return acts.mean_loss;
  }
  ops::upload(memory, acts.targets.span(), targets);
  kernels.softmax_cross_entropy_forward(acts.losses, acts.probs, acts.logits, acts.targets.span(), N, V);
  // F.cross_entropy's mean, on the host in a fixed order; summed in double so a float model's loss
  // does not drift with B·T.
  ops::download(memory, std::span<Scalar>(acts.host_rows), std::span<const Scalar>(acts.losses));
  double sum = 0;
  for (const Scalar loss : acts.host_rows) sum += static_cast<double>(loss);
  acts.mean_loss = static_cast<Scalar>(sum / static_cast<double>(N));
  acts.has_targets = true;
  return acts.mean_loss;
}

template float gpt_forward<float>(const Gpt<float>&, Activations<float>&, std::span<const std::int32_t>,
                                  std::span<const std::int32_t>, MatmulHooks<float>*);
template double gpt_forward<double>(const Gpt<double>&, Activations<double>&, std::span<const std::int32_t>,
                                    std::span<const std::int32_t>, MatmulHooks<double>*);

}  // namespace altgrad::model
