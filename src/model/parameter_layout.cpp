#include "model/parameter_layout.hpp"

#include <stdexcept>
#include <utility>

namespace altgrad::model {

ParameterLayout::ParameterLayout(const GptConfig& config) : config_(config) {
  validate(config);
  const std::size_t C = config.n_embd;
  const std::size_t H = hidden_size(config);
  const std::size_t I = mlp_inner_size(config);
  const bool linear_bias = config.bias;
  // RMSNorm has no bias whatever `bias` says; nanoGPT's LayerNorm has one when bias=true.
  const bool norm_bias = config.bias && config.norm == Norm::layernorm;

  wte_ = add("transformer.wte.weight", {config.vocab_size, C}, ParameterRole::embedding);
  wpe_ = add("transformer.wpe.weight", {config.block_size, C}, ParameterRole::embedding);
  blocks_.reserve(config.n_layer);
  for (std::size_t i = 0; i < config.n_layer; ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    BlockSlots b;
    b.ln_1_weight = add(p + "ln_1.weight", {C}, ParameterRole::norm_weight);
    b.ln_1_bias = add_optional(norm_bias, p + "ln_1.bias", {C}, ParameterRole::bias);
    b.attn_c_attn_weight = add(p + "attn.c_attn.weight", {3 * C, C}, ParameterRole::linear_weight);
    b.attn_c_attn_bias = add_optional(linear_bias, p + "attn.c_attn.bias", {3 * C}, ParameterRole::bias);
    b.attn_c_proj_weight = add(p + "attn.c_proj.weight", {C, C}, ParameterRole::residual_projection);
    b.attn_c_proj_bias = add_optional(linear_bias, p + "attn.c_proj.bias", {C}, ParameterRole::bias);
    b.ln_2_weight = add(p + "ln_2.weight", {C}, ParameterRole::norm_weight);
    b.ln_2_bias = add_optional(norm_bias, p + "ln_2.bias", {C}, ParameterRole::bias);
    b.mlp_c_fc_weight = add(p + "mlp.c_fc.weight", {I, C}, ParameterRole::linear_weight);
    b.mlp_c_fc_bias = add_optional(linear_bias, p + "mlp.c_fc.bias", {I}, ParameterRole::bias);
    b.mlp_c_proj_weight = add(p + "mlp.c_proj.weight", {C, H}, ParameterRole::residual_projection);
    b.mlp_c_proj_bias = add_optional(linear_bias, p + "mlp.c_proj.bias", {C}, ParameterRole::bias);
    blocks_.push_back(b);
  }
  ln_f_weight_ = add("transformer.ln_f.weight", {C}, ParameterRole::norm_weight);
  ln_f_bias_ = add_optional(norm_bias, "transformer.ln_f.bias", {C}, ParameterRole::bias);

  state_dict_ = tensors_;
  state_dict_.push_back(
      {"lm_head.weight", {config.vocab_size, C}, wte_, ParameterRole::embedding, "transformer.wte.weight"});
}

Slot ParameterLayout::add(std::string name, std::vector<std::size_t> shape, ParameterRole role) {
  std::size_t size = 1;
  for (const std::size_t extent : shape) size *= extent;
  const Slot slot{size_, size};
  tensors_.push_back({std::move(name), std::move(shape), slot, role, {}});
  size_ += size;
  return slot;
}

Slot ParameterLayout::add_optional(bool present, std::string name, std::vector<std::size_t> shape, ParameterRole role) {
  return present ? add(std::move(name), std::move(shape), role) : Slot{};
}

const TensorSpec* ParameterLayout::find(std::string_view name) const {
  for (const TensorSpec& spec : state_dict_) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const TensorSpec& ParameterLayout::at(std::string_view name) const {
  if (const TensorSpec* spec = find(name)) return *spec;
  throw std::out_of_range("no parameter tensor named '" + std::string(name) + "' in this GPT (n_layer = " +
                          std::to_string(config_.n_layer) + ", bias = " + (config_.bias ? "true" : "false") +
                          ", norm = " + std::string(to_string(config_.norm)) + ")");
}

}  // namespace altgrad::model
