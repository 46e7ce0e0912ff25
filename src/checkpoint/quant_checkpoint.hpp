#pragma once
// The quantization part of a checkpoint:
//   recipe.json         the resolved recipe, every point with its settings (recipe/recipe.hpp)
//   quant.safetensors   delayed-scaling state: "<point>.amax_history" (oldest first) and
//                       "<point>.scale" (one value) for each point under delayed scaling
// so that a resumed run continues with the same scales, and `altgrad eval` runs the forward pass
// as it was trained.
#include <filesystem>
#include <optional>

#include "recipe/recipe.hpp"
#include "model/matmul_points.hpp"
#include "precision/quant_hooks.hpp"

namespace altgrad::checkpoint {

// recipe.json, written atomically: a checkpoint's holds the recipe of the phase that ran its last
// step; the run directory's the whole schedule (schedule_to_json).
void write_recipe(const std::filesystem::path& file, const recipe::Recipe& recipe);
void write_schedule(const std::filesystem::path& file, const recipe::Schedule& schedule);

void save_quant_state(const std::filesystem::path& checkpoint_dir, const recipe::Recipe& recipe,
                      const precision::QuantHooks* hooks);

// The checkpoint's recipe; nullopt for a checkpoint written without one (treated as fp32).
std::optional<recipe::Recipe> load_checkpoint_recipe(const std::filesystem::path& checkpoint_dir,
                                             const model::MatmulPoints& points);

// Restores every delayed point's history and scale. Throws CheckpointError naming the file and
// tensor when one is missing or has the wrong length.
void load_quant_state(const std::filesystem::path& checkpoint_dir, precision::QuantHooks& hooks);

}  // namespace altgrad::checkpoint
