#include "train/evaluation_hooks.hpp"

#include "train/quant_checkpoint.hpp"
#include "train/quant_recipe.hpp"

namespace altgrad::train {

EvaluationHooks evaluation_hooks(const std::filesystem::path& checkpoint_dir, const model::MatmulPoints& points,
                                 const std::string& preset) {
  EvaluationHooks out;
  std::optional<Recipe> recipe;
  if (preset.empty()) {
    recipe = load_checkpoint_recipe(checkpoint_dir, points);
    out.recipe_name = recipe ? recipe->preset + " (the checkpoint's)" : "fp32 (the checkpoint has no recipe)";
  } else {
    recipe = preset_recipe(points, preset, 0);
    for (auto& point : recipe->points) {
      if (point.settings.scaling == quant::Scaling::delayed) point.settings.scaling = quant::Scaling::tensor;
    }
    out.recipe_name = preset;
  }
  if (!recipe || !recipe->any_enabled()) return out;
  out.hooks.emplace(points, *recipe);
  // Frozen delayed points use the restored scale: the one the next training step would use.
  if (preset.empty()) load_quant_state(checkpoint_dir, *out.hooks);
  out.hooks->set_frozen(true);
  return out;
}

}  // namespace altgrad::train
