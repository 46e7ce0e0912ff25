#include "train/non_finite.hpp"

#include <cmath>
#include <span>
#include <utility>
#include <vector>

namespace altgrad::train {
namespace {

bool all_finite(std::span<const float> values) {
  bool finite = true;
#pragma omp parallel for reduction(&& : finite) schedule(static)
  for (std::size_t i = 0; i < values.size(); ++i) finite = finite && std::isfinite(values[i]);
  return finite;
}

using Named = std::pair<std::string, std::span<const float>>;

// The activations in the order the forward pass writes them.
std::vector<Named> forward_order(const model::Activations<float>& acts) {
  std::vector<Named> tensors{{"embedding (wte + wpe)", acts.encoded}};
  for (std::size_t i = 0; i < acts.layers.size(); ++i) {
    const auto& l = acts.layers[i];
    const std::string h = "h." + std::to_string(i);
    tensors.insert(tensors.end(), {{h + ".ln_1 (output)", l.ln_1},
                                   {h + ".attn.c_attn (output q, k, v)", l.qkv},
                                   {h + ".attn.probs", l.att_probs},
                                   {h + ".attn (output y)", l.att_y},
                                   {h + ".attn.c_proj (output)", l.att_proj},
                                   {h + " (residual after attention)", l.residual2},
                                   {h + ".ln_2 (output)", l.ln_2},
                                   {h + ".mlp.c_fc (output)", l.fc},
                                   {h + ".mlp (activation output)", l.fc_act},
                                   {h + ".mlp.c_proj (output)", l.fc_proj},
                                   {h + " (block output)", l.residual3}});
  }
  tensors.insert(tensors.end(), {{"ln_f (output)", acts.ln_f}, {"lm_head (logits)", acts.logits}});
  return tensors;
}

}  // namespace

std::optional<std::string> first_non_finite_activation(const model::Activations<float>& acts) {
  for (const auto& [name, values] : forward_order(acts)) {
    if (!all_finite(values)) return name;
  }
  return std::nullopt;
}

std::optional<std::string> first_non_finite_gradient(const model::Gpt<float>& model) {
  for (const auto& spec : model.layout().tensors()) {
    if (spec.alias_of.empty() && !all_finite(spec.slot.in(model.gradients()))) return spec.name;
  }
  return std::nullopt;
}

}  // namespace altgrad::train
