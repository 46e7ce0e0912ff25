#pragma once
// Everything a forward pass writes and its backward pass reads, for one batch shape (B, T),
// allocated once (one buffer, carved into named views, as llm.c's ActivationTensors) so that the
// passes never allocate. Shapes, with N = B·T rows, C = n_embd, I = c_fc width (H, or 2H for
// swiglu), H = MLP hidden width, V = vocab_size, NH = n_head:
//
//   encoded               (B, T, C)        wte[token] + wpe[t], the residual stream into block 0
//   per block l (layers[l]):
//     ln_1                (B, T, C)        ln_1(x): :act of attn.c_attn
//     ln_1_mean, ln_1_rstd (B, T)          statistics for the backward pass; mean is empty
//                                          under rmsnorm
//     qkv                 (B, T, 3C)
//     att_y               (B, T, C)        attention output: :act of attn.c_proj
//     att_probs           (B, NH, T, T)    causal softmax(q·kᵀ/√hs), as computed even when
//                                          hooked; masked entries 0
//     att_proj            (B, T, C)        c_proj(att_y)
//     residual2           (B, T, C)        x + att_proj
//     ln_2, ln_2_mean, ln_2_rstd           as ln_1, of residual2: ln_2 is :act of mlp.c_fc
//     fc                  (B, T, I)        c_fc output, the GELU/SwiGLU pre-activation
//     fc_act              (B, T, H)        gelu(fc) or swiglu(fc): :act of mlp.c_proj
//     fc_proj             (B, T, C)
//     residual3           (B, T, C)        residual2 + fc_proj, the block's output
//   ln_f, ln_f_mean, ln_f_rstd             final norm of the last residual3: :act of lm_head
//   logits, probs         (B, T, V)        probs = softmax(logits), kept for the backward pass
//   losses                (B, T)           per-position cross-entropy; mean_loss is their mean
//
// With OperandCopies::allocated there is also room for what MatmulHooks write (matmul_hooks.hpp):
// one copy per matmul input (ln_1_hooked, ...), kept for the backward pass, and one scratch for the
// inputs whose copy no backward GEMM reads (inp_hooked_scratch); one parameter-shaped buffer for
// hooked weights (each at its parameter's slot; lm_head's at wte's), and one scratch for a hooked
// dY. The attention operands (self_attention.hpp) have their own:
//
//   per block l:
//     qkv_hooked          (B, T, 3C)       q, k, v as the attention products read them
//     att_probs_hooked    (B, NH, T, T)    the probabilities that multiply v
//   qkv_third, qkv_third_hooked (B, T, C)  scratch, shared by all blocks: one of q, k, v gathered
//                                          for its hook, and the hook's output
//
// A copy is written only while its point is active; `used` and `attention_used` say which buffers
// the forward pass read, so the backward pass reads the same (straight-through estimator).
//
// The backward pass's own buffers (gradients of activations, reused from block to block) are in
// `grad`. Nothing here is meaningful before a forward pass; views point into this object's own
// storage, so it can be moved but not copied. Every view lies in the memory the Activations were
// made in, which must be the model's backend's (gpt.hpp).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "model/config.hpp"
#include "model/linear.hpp"
#include "model/matmul_points.hpp"
#include "model/self_attention.hpp"
#include "ops/memory.hpp"
#include "ops/operands.hpp"

namespace altgrad::model {

// Whether Activations hold room for hooked operands; a pass with hooks needs it. Without hooks
// the copies are dead weight: about the size of the matmul inputs plus one parameter buffer.
enum class OperandCopies { none, allocated };

template <typename Scalar>
struct LayerActivations {
  std::span<Scalar> ln_1, ln_1_mean, ln_1_rstd;
  std::span<Scalar> qkv, att_y, att_probs, att_proj, residual2;
  std::span<Scalar> ln_2, ln_2_mean, ln_2_rstd;
  std::span<Scalar> fc, fc_act, fc_proj, residual3;
  // Hooked :act copies (empty without OperandCopies::allocated).
  std::span<Scalar> ln_1_hooked, att_y_hooked, ln_2_hooked, fc_act_hooked;
  // Hooked attention operands (empty without OperandCopies::allocated).
  std::span<Scalar> qkv_hooked, att_probs_hooked;
  // What each GEMM of the block multiplied, indexed by BlockMatmul.
  std::array<LinearInputs<Scalar>, kMatmulsPerBlock> used{};
  // What the attention products multiplied: qkv or qkv_hooked, att_probs or att_probs_hooked.
  ops::AttentionOperands<Scalar> attention_used{};
};

// Gradients of activations, one block's worth, reused by every block in the backward pass.
template <typename Scalar>
struct ActivationGradients {
  std::span<Scalar> residual;     // (B, T, C)   d loss / d residual stream at the current depth
  std::span<Scalar> ln;           // (B, T, C)   d ln_1 / d ln_2 / d ln_f output
  std::span<Scalar> qkv;          // (B, T, 3C)
  std::span<Scalar> att_y;        // (B, T, C)
  std::span<Scalar> att_probs;    // (B, NH, T, T) scratch of the attention backward, shared by all layers
  std::span<Scalar> fc;           // (B, T, I)
  std::span<Scalar> fc_act;       // (B, T, H)
  std::span<Scalar> logits;       // (B, T, V)
  std::span<Scalar> losses;       // (B, T)      1/N each: d mean / d loss
  std::span<Scalar> dout_hooked;  // (B, T, max(3C, I, V)) a hooked dY; empty without copies
  // The backward GEMMs' own copies where a hook's copy depends on the reduction axis (block
  // scaling; linear.hpp, self_attention.hpp), shared by all layers; empty without copies.
  std::span<Scalar> dout_hooked_columns;    // (B, T, max(3C, I, V)) dY for dW, blocked along tokens
  std::span<Scalar> inp_hooked_columns;     // (B, T, max(C, H))     X for dW, blocked along tokens
  std::span<Scalar> weight_hooked_columns;  // the largest matmul weight: W for dX, blocked along OC
  std::span<Scalar> qkv_hooked;             // (B, T, 3C)      q, k, v as the attention backward reads them
  std::span<Scalar> att_probs_hooked;       // (B, NH, T, T)   probs for dv, blocked along queries
};

template <typename Scalar>
struct Activations {
  // Throws std::invalid_argument for an invalid config, B = 0, or T outside [1, block_size].
  Activations(const GptConfig& config, std::size_t B, std::size_t T, OperandCopies copies = OperandCopies::none,
              ops::Memory& memory = ops::host_memory());
  Activations(const Activations&) = delete;
  Activations& operator=(const Activations&) = delete;
  Activations(Activations&&) noexcept = default;
  Activations& operator=(Activations&&) noexcept = default;

  GptConfig config;
  std::size_t B, T;
  OperandCopies copies;

  ops::Buffer<Scalar> storage;        // every view below points into it
  ops::Buffer<std::int32_t> tokens;   // (B, T) the inputs of the last forward pass
  ops::Buffer<std::int32_t> targets;  // (B, T) its targets
  bool has_targets = false;           // whether the last forward pass computed the loss
  Scalar mean_loss = 0;
  // (B, T) on the host: the per-position losses on their way to mean_loss, and the backward
  // pass's d mean / d loss on its way to grad.losses.
  std::vector<Scalar> host_rows;

  std::span<Scalar> encoded;
  std::vector<LayerActivations<Scalar>> layers;
  std::span<Scalar> ln_f, ln_f_mean, ln_f_rstd, ln_f_hooked;
  std::span<Scalar> logits, probs, losses;
  LinearInputs<Scalar> lm_head_used{};
  std::span<Scalar> hooked_weights;  // parameter-shaped; empty without copies
  // (B, T, C) each, scratch for the q, k, v hooks; empty without copies.
  std::span<Scalar> qkv_third, qkv_third_hooked;
  // (B, T, max(C, H)) a hooked :act copy that only its own forward GEMM reads (one that depends on
  // the reduction axis, linear.hpp), shared by all layers; empty without copies.
  std::span<Scalar> inp_hooked_scratch;

  ActivationGradients<Scalar> grad;
};

}  // namespace altgrad::model
