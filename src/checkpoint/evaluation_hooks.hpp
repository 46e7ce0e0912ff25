#pragma once
// The forward pass a checkpoint is evaluated or sampled with (`altgrad eval`, `altgrad sample`, the
// sample after training): the checkpoint's own recipe with its saved delayed-scaling state, so the
// model runs exactly as its next training step would, or instead a preset or the recipe of another
// run (for example an FP32-trained model with an E7M0 run's points: the quantization error alone).
// The hooks are frozen: evaluating changes no scale and records no statistic.
#include <filesystem>
#include <optional>
#include <string>

#include "model/matmul_hooks.hpp"
#include "model/matmul_points.hpp"
#include "precision/quant_hooks.hpp"

namespace altgrad::checkpoint {

struct EvaluationHooks {
  std::optional<precision::QuantHooks> hooks;  // none when nothing is quantized
  std::string recipe_name;          // "fp8-hybrid (the checkpoint's)", "fp32", ...

  model::MatmulHooks<float>* get() { return hooks ? &*hooks : nullptr; }
};

// `recipe` empty: the checkpoint's recipe and quant.safetensors. A directory: the recipe of that
// checkpoint, or of a run directory's latest checkpoint. Otherwise a preset's name. A recipe other
// than the checkpoint's own runs its delayed-scaling points with per-tensor current scaling: its
// amax history belongs to other weights, and a preset brings none.
EvaluationHooks evaluation_hooks(const std::filesystem::path& checkpoint_dir, const model::MatmulPoints& points,
                                 const std::string& recipe);

}  // namespace altgrad::checkpoint
