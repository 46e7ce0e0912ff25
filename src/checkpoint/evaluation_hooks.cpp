#include "checkpoint/evaluation_hooks.hpp"

#include "checkpoint/checkpoint.hpp"
#include "checkpoint/quant_checkpoint.hpp"
#include "recipe/recipe.hpp"

namespace altgrad::checkpoint {
namespace {

// Another checkpoint's recipe, or a preset's; delayed points scale by each call's own amax.
std::optional<recipe::Recipe> foreign_recipe(const model::MatmulPoints& points, const std::string& recipe, std::string& name) {
  std::optional<recipe::Recipe> out;
  if (std::filesystem::is_directory(recipe)) {
    const std::filesystem::path source = resolve_checkpoint(recipe);
    out = load_checkpoint_recipe(source, points);
    name = (out ? out->preset : std::string("fp32")) + " (the recipe of " + source.string() + ")";
  } else {
    out = recipe::preset_recipe(points, recipe, 0);
    name = recipe;
  }
  if (!out) return out;
  for (auto& point : out->points) {
    if (point.settings.scaling == quant::Scaling::delayed) point.settings.scaling = quant::Scaling::tensor;
  }
  return out;
}

}  // namespace

EvaluationHooks evaluation_hooks(const std::filesystem::path& checkpoint_dir, const model::MatmulPoints& points,
                                 const std::string& recipe_name) {
  EvaluationHooks out;
  std::optional<recipe::Recipe> recipe;
  const bool own = recipe_name.empty();
  if (own) {
    recipe = load_checkpoint_recipe(checkpoint_dir, points);
    out.recipe_name = recipe ? recipe->preset + " (the checkpoint's)" : "fp32 (the checkpoint has no recipe)";
  } else {
    recipe = foreign_recipe(points, recipe_name, out.recipe_name);
  }
  if (!recipe || !recipe->any_enabled()) return out;
  out.hooks.emplace(points, *recipe);
  // Frozen delayed points use the restored scale: the one the next training step would use.
  if (own) load_quant_state(checkpoint_dir, *out.hooks);
  out.hooks->set_frozen(true);
  return out;
}

}  // namespace altgrad::checkpoint
