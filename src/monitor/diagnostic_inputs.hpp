#pragma once
// What a diagnostic step reads: the model, the step's last forward pass, its quantization hooks and
// the gradients of an FP32 shadow backward on the same batch (step_diagnostics.hpp).
#include <span>

#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "precision/quant_hooks.hpp"

namespace altgrad::monitor {

struct DiagnosticInputs {
  const model::Gpt<float>& model;
  const model::Activations<float>& acts;
  const precision::QuantHooks* hooks;    // null without a recipe
  std::span<const float> fp32_gradients;  // the shadow backward's, same layout as model.gradients()
};

}  // namespace altgrad::monitor
