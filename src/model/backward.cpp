// gpt_backward: the gradient of the mean loss of the last gpt_forward, pass by pass in reverse
// (see gpt.hpp). Most kernels add to their gradient outputs, so those activation gradients are
// zeroed before the kernel that produces them; the MLP activation and attention overwrite theirs.
// Parameter gradients are only ever added to.
#include <algorithm>
#include <stdexcept>
#include <utility>

#include "model/gpt.hpp"
#include "model/linear.hpp"
#include "model/mlp_activation.hpp"
#include "model/norm.hpp"
#include "model/self_attention.hpp"

namespace altgrad::model {
namespace {

template <typename Scalar>
void check_backward_arguments(const Gpt<Scalar>& model, const Activations<Scalar>& acts,
                              const MatmulHooks<Scalar>* hooks) {
  if (!(acts.config == model.config())) {
    throw std::invalid_argument("gpt_backward: the Activations were made for a different GptConfig");
  }
  if (!acts.has_targets) {
    throw std::invalid_argument(
        "gpt_backward: the last gpt_forward had no targets, so there is no loss to differentiate");
  }
  if (hooks != nullptr && acts.copies != OperandCopies::allocated) {
    throw std::invalid_argument(
        "gpt_backward: matmul hooks need room for hooked operands; make the Activations with "
        "OperandCopies::allocated");
  }
}

template <typename Scalar>
LinearBackwardCopies<Scalar> backward_copies(const ActivationGradients<Scalar>& g) {
  return {g.dout_hooked, g.dout_hooked_columns, g.inp_hooked_columns, g.weight_hooked_columns};
}

// One transformer block in reverse. On entry acts.grad.residual holds d loss / d residual3 of this
// block; on exit, d loss / d residual (the block's input). Both residual additions pass the
// gradient on unchanged, so the buffer is updated in place: each branch reads it as its dY, then
// the branch's norm adds its dX into it.
template <typename Scalar>
void block_backward(Gpt<Scalar>& model, Activations<Scalar>& acts, std::size_t layer, std::span<const Scalar> residual,
                    MatmulHooks<Scalar>* hooks) {
  const GptConfig& config = model.config();
  ops::Memory& memory = *model.backend().memory;
  ops::Kernels<Scalar>& kernels = *model.backend().kernels;
  const std::span<const Scalar> params = std::as_const(model).parameters();
  const std::span<Scalar> grads = model.gradients();
  const BlockSlots& p = model.layout().block(layer);
  const LayerActivations<Scalar>& l = acts.layers[layer];
  const ActivationGradients<Scalar>& g = acts.grad;
  const std::size_t B = acts.B, T = acts.T, N = B * T, C = config.n_embd, H = hidden_size(config);
  // dinp = dout · W, dW += doutᵀ · X, dbias += Σ dout, with X and W as the forward GEMM read them.
  const auto linear = [&](BlockMatmul m, std::span<Scalar> dinp, std::span<const Scalar> dout, Slot weight, Slot bias) {
    ops::zero(memory, dinp);
    linear_backward<Scalar>(kernels, dinp, weight.in(grads), bias.in(grads), dout, l.used[static_cast<std::size_t>(m)],
                            backward_copies(g), model.matmuls().block(layer, m), hooks, N);
  };

  // x + mlp(ln_2(x)): d fc_proj = d residual3.
  linear(BlockMatmul::mlp_c_proj, g.fc_act, g.residual, p.mlp_c_proj_weight, p.mlp_c_proj_bias);
  mlp_activation_backward<Scalar>(kernels, config.mlp, g.fc, l.fc, g.fc_act, N, H);
  linear(BlockMatmul::mlp_c_fc, g.ln, g.fc, p.mlp_c_fc_weight, p.mlp_c_fc_bias);
  norm_backward<Scalar>(kernels, config.norm, g.residual, p.ln_2_weight.in(grads), p.ln_2_bias.in(grads), g.ln,
                        l.residual2, p.ln_2_weight.in(params), l.ln_2_mean, l.ln_2_rstd, N, C);

  // x + attn(ln_1(x)): d att_proj = d residual2.
  linear(BlockMatmul::attn_c_proj, g.att_y, g.residual, p.attn_c_proj_weight, p.attn_c_proj_bias);
  // Straight-through: the products at the operands the forward pass multiplied (or, where the
  // hooks block along the reduction axis, at copies along the backward products' axes), the
  // softmax at the probabilities it produced.
  const AttentionCopies<Scalar> attention_copies{&memory, g.qkv_hooked, g.att_probs_hooked, acts.qkv_third,
                                                 acts.qkv_third_hooked};
  const AttentionShape shape{B, T, C, config.n_head};
  const ops::AttentionOperands<Scalar> attention_used = self_attention_backward_operands<Scalar>(
      l.attention_used, l.qkv, l.att_probs, attention_copies, model.matmuls(), layer, hooks, shape);
  kernels.attention_backward(g.qkv, g.att_probs, g.att_y, attention_used, l.att_probs, shape);
  linear(BlockMatmul::attn_c_attn, g.ln, g.qkv, p.attn_c_attn_weight, p.attn_c_attn_bias);
  norm_backward<Scalar>(kernels, config.norm, g.residual, p.ln_1_weight.in(grads), p.ln_1_bias.in(grads), g.ln,
                        residual, p.ln_1_weight.in(params), l.ln_1_mean, l.ln_1_rstd, N, C);
}

}  // namespace

template <typename Scalar>
void gpt_backward(Gpt<Scalar>& model, Activations<Scalar>& acts, MatmulHooks<Scalar>* hooks) {
  check_backward_arguments(model, acts, hooks);
  const GptConfig& config = model.config();
  const ParameterLayout& layout = model.layout();
  ops::Memory& memory = *model.backend().memory;
  ops::Kernels<Scalar>& kernels = *model.backend().kernels;
  const std::span<const Scalar> params = std::as_const(model).parameters();
  const std::span<Scalar> grads = model.gradients();
  const ActivationGradients<Scalar>& g = acts.grad;
  const std::size_t B = acts.B, T = acts.T, N = B * T, C = config.n_embd, V = config.vocab_size;

  // mean loss -> per-position losses -> logits.
  std::fill(acts.host_rows.begin(), acts.host_rows.end(), Scalar{1} / static_cast<Scalar>(N));
  ops::upload(memory, g.losses, std::span<const Scalar>(acts.host_rows));
  ops::zero(memory, g.logits);
  kernels.softmax_cross_entropy_backward(g.logits, g.losses, acts.probs, acts.targets.span(), N, V);

  // lm_head: its weight gradient is wte's (tied), the first of wte's two contributions.
  ops::zero(memory, g.ln);
  linear_backward<Scalar>(kernels, g.ln, layout.lm_head().in(grads), {}, g.logits, acts.lm_head_used,
                          backward_copies(g), model.matmuls().lm_head(), hooks, N);
  const std::span<const Scalar> last_residual = acts.layers.back().residual3;
  ops::zero(memory, g.residual);
  norm_backward<Scalar>(kernels, config.norm, g.residual, layout.ln_f_weight().in(grads), layout.ln_f_bias().in(grads),
                        g.ln, last_residual, layout.ln_f_weight().in(params), acts.ln_f_mean, acts.ln_f_rstd, N, C);

  for (std::size_t layer = config.n_layer; layer-- > 0;) {
    const std::span<const Scalar> residual =
        layer == 0 ? std::span<const Scalar>(acts.encoded) : std::span<const Scalar>(acts.layers[layer - 1].residual3);
    block_backward(model, acts, layer, residual, hooks);
  }

  // The embedding: wte's second contribution, and the first T rows of wpe.
  kernels.embedding_backward(layout.wte().in(grads), layout.wpe().in(grads).first(T * C), g.residual,
                             acts.tokens.span(), B, T, C, V);
}

template void gpt_backward<float>(Gpt<float>&, Activations<float>&, MatmulHooks<float>*);
template void gpt_backward<double>(Gpt<double>&, Activations<double>&, MatmulHooks<double>*);

}  // namespace altgrad::model
