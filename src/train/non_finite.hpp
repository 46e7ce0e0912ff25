#pragma once
// Where a NaN or Inf is, when the loss or the gradient norm says there is one: the first tensor,
// in the order the passes wrote them, holding a non-finite value. With a quantization recipe the
// hooks name the first quantization point that saw one (quant_hooks.hpp); these scans name a layer
// whether or not any point is quantized.
#include <optional>
#include <string>

#include "model/activations.hpp"
#include "model/gpt.hpp"

namespace altgrad::train {

// The first non-finite activation of the last forward pass, named like "h.2.mlp.c_fc (output)".
std::optional<std::string> first_non_finite_activation(const model::Activations<float>& acts);

// The first parameter (state_dict order) whose gradient is not finite, e.g. "transformer.h.0.attn.c_attn.weight".
std::optional<std::string> first_non_finite_gradient(const model::Gpt<float>& model);

}  // namespace altgrad::train
