#pragma once
// Where every parameter tensor lives in the model's one contiguous buffer, under its nanoGPT
// state_dict name and shape, in nanoGPT's state_dict order:
//
//   transformer.wte.weight              [V, C]            token embedding, also the LM head
//   transformer.wpe.weight              [block_size, C]
//   for i in 0 .. n_layer-1, prefix transformer.h.{i}.:
//     ln_1.weight [C]        ln_1.bias [C]                 bias: layernorm with bias=true only
//     attn.c_attn.weight [3C, C]   attn.c_attn.bias [3C]   rows [q | k | v]
//     attn.c_proj.weight [C, C]    attn.c_proj.bias [C]
//     ln_2.weight [C]        ln_2.bias [C]
//     mlp.c_fc.weight [I, C]       mlp.c_fc.bias [I]       I = H (gelu) or 2H (swiglu)
//     mlp.c_proj.weight [C, H]     mlp.c_proj.bias [C]
//   transformer.ln_f.weight [C]   transformer.ln_f.bias [C]
//   lm_head.weight                      [V, C]            ALIAS of transformer.wte.weight
//
// Linear weights are [out, in], as torch.nn.Linear. Biases exist only when config.bias; RMSNorm
// has a weight and never a bias.
//
// Weight tying: nanoGPT assigns transformer.wte.weight = lm_head.weight, so its state_dict holds
// both names for one tensor. Here the tensor is stored once (at wte's slot) and lm_head.weight is
// listed as an alias with the same slot, so a checkpoint writer can emit both names and a reader
// can accept either.
//
// SwiGLU: c_fc.weight rows [0, H) are the gate a (through silu) and rows [H, 2H) the value b, as
// ops/cpu/swiglu.hpp expects. A PyTorch SwiGLU with two Linears, y = w2(silu(w1(x)) * w3(x)), maps
// as w1.weight = c_fc.weight[:H], w3.weight = c_fc.weight[H:], w2.weight = c_proj.weight (and the
// biases likewise); equivalently a, b = c_fc(x).chunk(2, dim=-1); y = c_proj(F.silu(a) * b).
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.hpp"

namespace altgrad::model {

// A tensor's place in a buffer shaped like the parameters (the parameters themselves, their
// gradients, optimizer moments, quantized copies). An absent tensor (a bias when bias=false) has
// size 0, and in() gives an empty span, which the kernels read as "none".
struct Slot {
  std::size_t offset = 0;
  std::size_t size = 0;

  template <typename T>
  std::span<T> in(std::span<T> buffer) const {
    return buffer.subspan(offset, size);
  }
};

// What a tensor is, for initialization and for optimizers that treat groups differently (nanoGPT
// decays the 2-D ones: embeddings and Linear weights).
enum class ParameterRole {
  embedding,            // wte, wpe
  linear_weight,        // c_attn.weight, mlp.c_fc.weight
  residual_projection,  // attn.c_proj.weight, mlp.c_proj.weight: scaled init
  bias,                 // every Linear and LayerNorm bias
  norm_weight,          // ln_1, ln_2, ln_f weights
};

// The weight of a block's Linear layer: an operand of a matmul whose grid the recipe sets (the LM
// head's weight is wte, an embedding).
inline bool is_matmul_weight(ParameterRole role) {
  return role == ParameterRole::linear_weight || role == ParameterRole::residual_projection;
}

struct TensorSpec {
  std::string name;                // nanoGPT state_dict key
  std::vector<std::size_t> shape;  // row-major
  Slot slot;
  ParameterRole role;
  std::string alias_of;  // empty, or the stored tensor this name shares (lm_head.weight)
};

// The slots of one transformer block; absent biases have size 0.
struct BlockSlots {
  Slot ln_1_weight, ln_1_bias;
  Slot attn_c_attn_weight, attn_c_attn_bias;
  Slot attn_c_proj_weight, attn_c_proj_bias;
  Slot ln_2_weight, ln_2_bias;
  Slot mlp_c_fc_weight, mlp_c_fc_bias;
  Slot mlp_c_proj_weight, mlp_c_proj_bias;
};

class ParameterLayout {
 public:
  // Validates the config (std::invalid_argument).
  explicit ParameterLayout(const GptConfig& config);

  const GptConfig& config() const { return config_; }

  // Stored tensors in state_dict order, without the lm_head.weight alias. A tensor's position here
  // is its parameter index (the stream of its random initialization).
  std::span<const TensorSpec> tensors() const { return tensors_; }
  // All state_dict entries in nanoGPT's order: tensors() then lm_head.weight.
  std::span<const TensorSpec> state_dict() const { return state_dict_; }

  // Elements in the buffer: the parameter count, which is nanoGPT's sum(p.numel() for p in
  // model.parameters()) (tied weight counted once).
  std::size_t size() const { return size_; }

  // By state_dict name (the alias included); nullptr when there is no such tensor.
  const TensorSpec* find(std::string_view name) const;
  // As find, but throws std::out_of_range naming the tensor.
  const TensorSpec& at(std::string_view name) const;

  Slot wte() const { return wte_; }
  Slot wpe() const { return wpe_; }
  const BlockSlots& block(std::size_t layer) const { return blocks_.at(layer); }
  Slot ln_f_weight() const { return ln_f_weight_; }
  Slot ln_f_bias() const { return ln_f_bias_; }
  Slot lm_head() const { return wte_; }  // tied

 private:
  Slot add(std::string name, std::vector<std::size_t> shape, ParameterRole role);
  Slot add_optional(bool present, std::string name, std::vector<std::size_t> shape, ParameterRole role);

  GptConfig config_;
  std::vector<TensorSpec> tensors_;
  std::vector<TensorSpec> state_dict_;
  std::size_t size_ = 0;
  Slot wte_, wpe_, ln_f_weight_, ln_f_bias_;
  std::vector<BlockSlots> blocks_;
};

}  // namespace altgrad::model
