#include "config/quant_recipe.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "config/recipe_table.hpp"
#include "format/parse.hpp"
#include "io/json_integer.hpp"
#include "io/safetensors.hpp"
#include "quant/mx.hpp"

namespace altgrad::config {
namespace {

using quant::Role;
using quant::SettingsPatch;

Recipe resolved(const quant::RecipeSpec& spec, const model::MatmulPoints& points, std::uint64_t seed) {
  const std::vector<quant::PointName> names = recipe_points(points);
  try {
    return Recipe{spec.preset, seed, quant::resolve(spec, names)};
  } catch (const quant::RecipeError& e) {
    throw ConfigError(e.what());
  }
}

// Field `key` of a recipe.json object as an integer of type T; recipe_from_json reports the throw.
template <typename T>
T recipe_integer(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = object.at(key);
  const std::optional<T> integer = io::json_integer<T>(value);
  if (!integer) throw std::invalid_argument(std::string("'") + key + "' must be an integer in range, got " + value.dump());
  return *integer;
}

}  // namespace

bool Recipe::any_enabled() const {
  return std::any_of(points.begin(), points.end(), [](const auto& p) { return p.settings.enabled; });
}

std::vector<quant::PointName> recipe_points(const model::MatmulPoints& points) {
  std::vector<quant::PointName> names;
  names.reserve(points.operand_count());
  const std::string_view lm_head = points.lm_head().name;
  for (const model::OperandPoint& point : points.operands()) {
    const bool matmul = point.operand == model::Operand::act || point.operand == model::Operand::weight ||
                        point.operand == model::Operand::grad;
    const Role role = point.operand == model::Operand::weight ? Role::weight
                      : point.operand == model::Operand::grad ? Role::grad
                                                              : Role::act;
    const bool on = matmul && !std::string_view(point.name).starts_with(lm_head);
    names.push_back({point.name, role, on});
  }
  return names;
}

std::size_t Schedule::phase_at(std::int64_t step) const {
  std::size_t index = 0;
  while (index + 1 < phases.size() && phases[index + 1].start <= step) ++index;
  return index;
}

bool Schedule::any_enabled() const {
  return std::any_of(phases.begin(), phases.end(), [](const Phase& p) { return p.recipe.any_enabled(); });
}

Schedule resolve_schedule(const TrainConfig& config) {
  const RecipeTable table = read_recipe_table(config.quant.table());
  const std::uint64_t seed = table.seed.value_or(config.seed);
  const model::MatmulPoints points(gpt_config(config));
  Schedule schedule;
  for (const PhaseSpec& phase : table.phases) schedule.phases.push_back(Phase{phase.start, resolved(phase.spec, points, seed)});
  return schedule;
}

Recipe resolve_recipe(const TrainConfig& config) { return resolve_schedule(config).phases.front().recipe; }

nlohmann::json schedule_to_json(const Schedule& schedule) {
  if (schedule.phases.size() == 1) return recipe_to_json(schedule.phases.front().recipe);
  nlohmann::json phases = nlohmann::json::array();
  for (const Phase& p : schedule.phases) phases.push_back({{"start", p.start}, {"recipe", recipe_to_json(p.recipe)}});
  return {{"phases", phases}};
}

Recipe preset_recipe(const model::MatmulPoints& points, std::string_view preset, std::uint64_t seed) {
  try {
    return resolved(quant::preset(preset), points, seed);
  } catch (const quant::RecipeError& e) {
    throw ConfigError(std::string("--recipe: ") + e.what());
  }
}

nlohmann::json recipe_to_json(const Recipe& recipe) {
  nlohmann::json points = nlohmann::json::array();
  for (const quant::ResolvedPoint& p : recipe.points) {
    const quant::PointSettings& s = p.settings;
    points.push_back({{"name", p.name}, {"enabled", s.enabled}, {"format", s.format_name},
                      {"rounding", format::rounding_name(s.rounding)}, {"scaling", quant::scaling_name(s.scaling)},
                      {"history", s.history}, {"amax", quant::amax_name(s.amax)}, {"margin", s.margin},
                      {"block", s.block}, {"scale_rule", quant::scale_rule_name(s.scale_rule)}});
  }
  return {{"preset", recipe.preset}, {"seed", recipe.seed}, {"points", points}};
}

Recipe recipe_from_json(const nlohmann::json& json, const model::MatmulPoints& points, const std::string& source) {
  try {
    Recipe recipe{json.at("preset").get<std::string>(), recipe_integer<std::uint64_t>(json, "seed"), {}};
    const nlohmann::json& entries = json.at("points");
    if (entries.size() != points.operand_count()) {
      throw io::CheckpointError(source + ": " + std::to_string(entries.size()) + " points, the model has " +
                            std::to_string(points.operand_count()));
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const nlohmann::json& e = entries[i];
      const std::string name = e.at("name").get<std::string>();
      if (name != points.operands()[i].name) {
        throw io::CheckpointError(source + ": point " + std::to_string(i) + " is " + name + ", the model's is " +
                              points.operands()[i].name);
      }
      SettingsPatch patch;
      patch.enabled = e.at("enabled").get<bool>();
      patch.format = e.at("format").get<std::string>();
      patch.rounding = format::parse_rounding(e.at("rounding").get<std::string>()).value();
      patch.scaling = quant::parse_scaling(e.at("scaling").get<std::string>()).value();
      patch.history = recipe_integer<std::size_t>(e, "history");
      patch.amax = quant::parse_amax(e.at("amax").get<std::string>()).value();
      patch.margin = recipe_integer<int>(e, "margin");
      patch.block = recipe_integer<std::size_t>(e, "block");
      patch.scale_rule = quant::parse_scale_rule(e.at("scale_rule").get<std::string>()).value();
      quant::PointSettings settings;
      patch.apply_to(settings, source + ": " + name);
      recipe.points.push_back({name, settings});
    }
    return recipe;
  } catch (const io::CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    throw io::CheckpointError(source + ": not a valid recipe: " + e.what());
  }
}

}  // namespace altgrad::config
