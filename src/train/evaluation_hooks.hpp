#pragma once
// The forward pass a checkpoint is evaluated or sampled with (`altgrad eval`, `altgrad sample`, the
// sample after training): the checkpoint's own recipe with its saved delayed-scaling state, so the
// model runs exactly as its next training step would, or a preset instead. The hooks are frozen:
// evaluating changes no scale and records no statistic.
#include <filesystem>
#include <optional>
#include <string>

#include "model/matmul_hooks.hpp"
#include "model/matmul_points.hpp"
#include "train/quant_hooks.hpp"

namespace altgrad::train {

struct EvaluationHooks {
  std::optional<QuantHooks> hooks;  // none when nothing is quantized
  std::string recipe_name;          // "fp8-hybrid (the checkpoint's)", "fp32", ...

  model::MatmulHooks<float>* get() { return hooks ? &*hooks : nullptr; }
};

// `preset` empty: the checkpoint's recipe and quant.safetensors. Otherwise that preset, whose
// delayed-scaling points use per-tensor current scaling (a preset brings no amax history).
EvaluationHooks evaluation_hooks(const std::filesystem::path& checkpoint_dir, const model::MatmulPoints& points,
                                 const std::string& preset);

}  // namespace altgrad::train
