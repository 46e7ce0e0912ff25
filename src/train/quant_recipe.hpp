#pragma once
// The [quant] table of a training config, read into a quantization recipe and resolved against
// the model's quantization points (quant/recipe.hpp has the semantics):
//
//   [quant]
//   preset = "fp8-hybrid"        # fp32 (default) | bf16 | fp8-hybrid | fp8-e4m3 | mx8
//   seed = 7                     # stochastic rounding; default: the run's seed
//   [quant.grad]                 # role defaults: [quant.act], [quant.weight], [quant.grad]
//   rounding = "stochastic"
//   [[quant.override]]           # later entries win
//   match = "h.*.attn.probs"
//   format = "e1m6"
//
// Settings keys (role tables and overrides): enabled, format, rounding, scaling, history, amax,
// margin, block, scale_rule. Every problem is a ConfigError naming file:line, key and value.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/matmul_points.hpp"
#include "quant/recipe.hpp"
#include "train/config.hpp"

namespace altgrad::train {

struct Recipe {
  std::string preset;
  std::uint64_t seed = 0;
  std::vector<quant::ResolvedPoint> points;  // by the model's dense point index

  bool any_enabled() const;
};

// The model's points in recipe terms, by dense index.
std::vector<quant::PointName> recipe_points(const model::MatmulPoints& points);

// Reads config.quant and resolves it for config's model. Throws ConfigError.
Recipe resolve_recipe(const TrainConfig& config);

// A preset resolved for a model (altgrad eval --recipe). Throws ConfigError naming the presets.
Recipe preset_recipe(const model::MatmulPoints& points, std::string_view preset, std::uint64_t seed);

// The resolved recipe as the run directory and checkpoints store it (recipe.json), and back.
// recipe_from_json throws CheckpointError naming `source` on a malformed file or on points that
// differ from the model's.
nlohmann::json recipe_to_json(const Recipe& recipe);
Recipe recipe_from_json(const nlohmann::json& json, const model::MatmulPoints& points, const std::string& source);

}  // namespace altgrad::train
