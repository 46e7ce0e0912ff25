#include "recipe/recipe.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>

#include "recipe/recipe_table.hpp"
#include "format/accumulator.hpp"
#include "format/parse.hpp"
#include "io/json_integer.hpp"
#include "io/safetensors.hpp"
#include "quant/mx.hpp"

namespace altgrad::recipe {
namespace {

using config::ConfigError;

// A matmul operand's dense point index: Role's act, weight, grad are model::Operand's.
static_assert(static_cast<std::size_t>(Role::act) == static_cast<std::size_t>(model::Operand::act) &&
              static_cast<std::size_t>(Role::weight) == static_cast<std::size_t>(model::Operand::weight) &&
              static_cast<std::size_t>(Role::grad) == static_cast<std::size_t>(model::Operand::grad));
std::size_t operand_index(std::size_t matmul_index, Role role) {
  return matmul_index * model::kOperandsPerMatmul + static_cast<std::size_t>(role);
}

// An emulated model that takes its operands in their own format is the FP8 tensor core, which
// applies one scale per operand tensor: it cannot read MX blocks, whose scales change along K.
// `origins`: where each GEMM's model was set, by Gemm.
void check_accumulation(const Recipe& recipe, const model::MatmulPoints& points,
                        const std::array<std::string, kGemmCount>& origins) {
  for (const model::MatmulPoint& matmul : points.all()) {
    for (std::size_t g = 0; g < kGemmCount; ++g) {
      const auto gemm = static_cast<Gemm>(g);
      const format::AccumulatorModel& accumulator = recipe.accumulation(matmul.index, gemm);
      if (!accumulator.emulated() || accumulator.inputs != format::AccumulatorModel::Inputs::format) continue;
      for (const Role role : gemm_operands(gemm)) {
        const ResolvedPoint& point = recipe.points[operand_index(matmul.index, role)];
        if (point.settings.scaling != quant::Scaling::block) continue;
        throw ConfigError(origins[g] + ": quant: accumulate." + std::string(gemm_name(gemm)) + " = \"" +
                          format::accumulator_name(accumulator) + "\" cannot read " + point.name +
                          ", which is under block scaling: the FP8 tensor core takes one scale per tensor; MX block "
                          "scaling needs a model with inputs=bf16 (e.g. hopper_bf16)");
      }
    }
  }
}

Recipe resolved(const RecipeSpec& spec, const model::MatmulPoints& points, std::uint64_t seed) {
  const std::vector<PointName> names = recipe_points(points);
  Recipe recipe;
  try {
    recipe = Recipe{spec.preset, seed, resolve(spec, names), spec.accumulate};
  } catch (const quant::SettingsError& e) {
    throw ConfigError(e.what());
  }
  check_accumulation(recipe, points, spec.accumulate_origin);
  return recipe;
}

// recipe.json's "accumulate": every GEMM's model by name. recipe_from_json reports the throw.
nlohmann::json accumulation_to_json(const GemmAccumulation& accumulation) {
  nlohmann::json object = nlohmann::json::object();
  for (std::size_t g = 0; g < kGemmCount; ++g) {
    object[std::string(kGemmNames[g])] = format::accumulator_name(accumulation[g]);
  }
  return object;
}

GemmAccumulation accumulation_from_json(const nlohmann::json& object) {
  if (!object.is_object()) throw std::invalid_argument("'accumulate' must be an object, got " + object.dump());
  for (const auto& item : object.items()) {
    if (!parse_gemm(item.key())) {
      throw std::invalid_argument("'accumulate' names no GEMM '" + item.key() + "' (forward, dgrad, wgrad)");
    }
  }
  GemmAccumulation accumulation;
  for (std::size_t g = 0; g < kGemmCount; ++g) {
    accumulation[g] = format::parse_accumulator(object.at(std::string(kGemmNames[g])).get<std::string>());
  }
  return accumulation;
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

const format::AccumulatorModel& Recipe::accumulation(std::size_t matmul_index, Gemm gemm) const {
  static const format::AccumulatorModel kFp32{};
  for (const Role role : gemm_operands(gemm)) {
    if (!points.at(operand_index(matmul_index, role)).settings.enabled) return kFp32;
  }
  return accumulate[static_cast<std::size_t>(gemm)];
}

std::vector<PointName> recipe_points(const model::MatmulPoints& points) {
  std::vector<PointName> names;
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

Schedule resolve_schedule(const config::TrainConfig& config) {
  const ScheduleSpec table = read_recipe_table(config.quant.table());
  const std::uint64_t seed = table.seed.value_or(config.seed);
  const model::MatmulPoints points(config::gpt_config(config));
  Schedule schedule;
  for (const PhaseSpec& phase : table.phases) schedule.phases.push_back(Phase{phase.start, resolved(phase.spec, points, seed)});
  return schedule;
}

Recipe resolve_recipe(const config::TrainConfig& config) { return resolve_schedule(config).phases.front().recipe; }

nlohmann::json schedule_to_json(const Schedule& schedule) {
  if (schedule.phases.size() == 1) return recipe_to_json(schedule.phases.front().recipe);
  nlohmann::json phases = nlohmann::json::array();
  for (const Phase& p : schedule.phases) phases.push_back({{"start", p.start}, {"recipe", recipe_to_json(p.recipe)}});
  return {{"phases", phases}};
}

Recipe preset_recipe(const model::MatmulPoints& points, std::string_view preset, std::uint64_t seed) {
  try {
    return resolved(recipe::preset(preset), points, seed);
  } catch (const quant::SettingsError& e) {
    throw ConfigError(std::string("--recipe: ") + e.what());
  }
}

nlohmann::json recipe_to_json(const Recipe& recipe) {
  nlohmann::json points = nlohmann::json::array();
  for (const ResolvedPoint& p : recipe.points) {
    const quant::PointSettings& s = p.settings;
    points.push_back({{"name", p.name}, {"enabled", s.enabled}, {"format", s.format_name},
                      {"rounding", format::rounding_name(s.rounding)}, {"scaling", quant::scaling_name(s.scaling)},
                      {"history", s.history}, {"amax", quant::amax_name(s.amax)}, {"margin", s.margin},
                      {"block", s.block}, {"scale_rule", quant::scale_rule_name(s.scale_rule)}});
  }
  nlohmann::json json = {{"preset", recipe.preset}, {"seed", recipe.seed}, {"points", points}};
  // Only where it says something: an FP32-accumulating recipe's file stays byte for byte as before.
  if (emulated(recipe.accumulate)) json["accumulate"] = accumulation_to_json(recipe.accumulate);
  return json;
}

Recipe recipe_from_json(const nlohmann::json& json, const model::MatmulPoints& points, const std::string& source) {
  try {
    Recipe recipe{json.at("preset").get<std::string>(), recipe_integer<std::uint64_t>(json, "seed"), {}, {}};
    if (const auto accumulate = json.find("accumulate"); accumulate != json.end()) {
      recipe.accumulate = accumulation_from_json(*accumulate);
    }
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
    std::array<std::string, kGemmCount> origins;
    origins.fill(source);
    try {
      check_accumulation(recipe, points, origins);
    } catch (const ConfigError& e) {
      throw io::CheckpointError(e.what());
    }
    return recipe;
  } catch (const io::CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    throw io::CheckpointError(source + ": not a valid recipe: " + e.what());
  }
}

}  // namespace altgrad::recipe
