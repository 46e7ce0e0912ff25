#include "checkpoint/quant_checkpoint.hpp"

#include <fstream>
#include <string>
#include <vector>

#include "io/atomic_file.hpp"
#include "io/run_directory.hpp"
#include "io/safetensors.hpp"


namespace altgrad::checkpoint {
namespace {

namespace fs = std::filesystem;
constexpr const char* kRecipeFile = "recipe.json";
using io::run_directory::kQuant;

bool has_delayed_points(const precision::QuantHooks& hooks) {
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    if (hooks.point(i) && hooks.point(i)->delayed()) return true;
  }
  return false;
}

}  // namespace

void write_recipe(const fs::path& file, const recipe::Recipe& recipe) {
  io::write_file_atomically(file, [&](std::ostream& out) { out << recipe::recipe_to_json(recipe).dump(2) << '\n'; });
}

void write_schedule(const fs::path& file, const recipe::Schedule& schedule) {
  io::write_file_atomically(file, [&](std::ostream& out) { out << recipe::schedule_to_json(schedule).dump(2) << '\n'; });
}

void save_quant_state(const fs::path& dir, const recipe::Recipe& recipe, const precision::QuantHooks* hooks) {
  write_recipe(dir / kRecipeFile, recipe);
  if (!hooks || !has_delayed_points(*hooks)) return;
  // Own the values: TensorRef only points at them.
  std::vector<std::vector<float>> histories;
  std::vector<float> scales;
  histories.reserve(hooks->size());
  scales.reserve(hooks->size());
  std::vector<io::TensorRef> tensors;
  for (std::size_t i = 0; i < hooks->size(); ++i) {
    const quant::PointQuantizer* point = hooks->point(i);
    if (!point || !point->delayed()) continue;
    histories.push_back(point->delayed()->history());
    scales.push_back(point->delayed()->scale());
    const std::string& name = hooks->name(i);
    tensors.push_back({name + ".amax_history", {static_cast<std::int64_t>(histories.back().size())}, histories.back()});
    tensors.push_back({name + ".scale", {1}, std::span<const float>(&scales.back(), 1)});
  }
  io::write_safetensors(dir / kQuant, tensors);
}

std::optional<recipe::Recipe> load_checkpoint_recipe(const fs::path& dir, const model::MatmulPoints& points) {
  const fs::path path = dir / kRecipeFile;
  if (!fs::exists(path)) return std::nullopt;
  std::ifstream in(path);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw io::CheckpointError(path.string() + ": not valid JSON: " + e.what());
  }
  return recipe::recipe_from_json(json, points, path.string());
}

void load_quant_state(const fs::path& dir, precision::QuantHooks& hooks) {
  if (!has_delayed_points(hooks)) return;
  const fs::path path = dir / kQuant;
  const io::SafetensorsFile file = io::read_safetensors(path);
  const auto tensor = [&](const std::string& name) -> const io::Tensor& {
    const auto found = file.tensors.find(name);
    if (found == file.tensors.end()) throw io::CheckpointError(path.string() + ": missing tensor '" + name + "'");
    return found->second;
  };
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    quant::PointQuantizer* point = hooks.point(i);
    if (!point || !point->delayed()) continue;
    const io::Tensor& history = tensor(hooks.name(i) + ".amax_history");
    const io::Tensor& scale = tensor(hooks.name(i) + ".scale");
    if (history.data.size() > point->settings().history || scale.data.size() != 1) {
      throw io::CheckpointError(path.string() + ": '" + hooks.name(i) + "' holds " + std::to_string(history.data.size()) +
                            " amaxes and " + std::to_string(scale.data.size()) + " scales; the recipe allows " +
                            std::to_string(point->settings().history) + " and 1");
    }
    point->delayed()->restore(history.data, scale.data[0]);
  }
}

}  // namespace altgrad::checkpoint
