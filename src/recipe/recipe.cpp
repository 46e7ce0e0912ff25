#include "recipe/recipe.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>

#include "recipe/recipe_table.hpp"
#include "recipe/hadamard_layers.hpp"
#include "recipe/hadamard_recipe.hpp"
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
bool one_scale_per_tensor(const format::AccumulatorModel& accumulator) {
  return accumulator.emulated() && accumulator.inputs == format::AccumulatorModel::Inputs::format;
}

// `origin`: where the model of GEMM `gemm` ("forward", ..., "attention") was set.
void check_block_scaling(const format::AccumulatorModel& accumulator, const std::string& point,
                         const quant::PointSettings& settings, std::string_view gemm, const std::string& origin) {
  if (settings.scaling != quant::Scaling::block) return;
  throw ConfigError(origin + ": quant: accumulate." + std::string(gemm) + " = \"" +
                    format::accumulator_name(accumulator) + "\" cannot read " + point +
                    ", which is under block scaling: the FP8 tensor core model takes one scale per tensor; "
                    "block scales (MX, or one per line for block = \"axis\") need a model with inputs=bf16 "
                    "(e.g. hopper_bf16)");
}

// `origins`: where each GEMM's model was set, by Gemm, then the attention products'.
struct AccumulationOrigins {
  std::array<std::string, kGemmCount> gemms;
  std::string attention;
};

void check_linear_accumulation(const Recipe& recipe, const model::MatmulPoints& points,
                               const std::array<std::string, kGemmCount>& origins) {
  for (const model::MatmulPoint& matmul : points.all()) {
    for (std::size_t g = 0; g < kGemmCount; ++g) {
      const auto gemm = static_cast<Gemm>(g);
      const format::AccumulatorModel& accumulator = recipe.accumulation(matmul.index, gemm);
      if (!one_scale_per_tensor(accumulator)) continue;
      for (const Role role : gemm_operands(gemm)) {
        const ResolvedPoint& point = recipe.points[operand_index(matmul.index, role)];
        check_block_scaling(accumulator, point.name, point.settings_for(gemm), gemm_name(gemm), origins[g]);
      }
    }
  }
}

void check_attention_accumulation(const Recipe& recipe, const model::MatmulPoints& points, const std::string& origin) {
  for (std::size_t layer = 0; layer < points.layers(); ++layer) {
    for (const auto gemm : {model::AttentionGemm::scores, model::AttentionGemm::values}) {
      const format::AccumulatorModel& accumulator = recipe.attention_accumulation(points, layer, gemm);
      if (!one_scale_per_tensor(accumulator)) continue;
      for (const model::Operand operand : model::attention_gemm_operands(gemm)) {
        const ResolvedPoint& point = recipe.points[points.attention(layer, operand).index];
        check_block_scaling(accumulator, point.name, point.settings, kAttentionAccumulateKey, origin);
      }
    }
  }
}

void check_accumulation(const Recipe& recipe, const model::MatmulPoints& points, const AccumulationOrigins& origins) {
  check_linear_accumulation(recipe, points, origins.gemms);
  check_attention_accumulation(recipe, points, origins.attention);
}

// `sequence_length`: the tokens of one training sequence, which wgrad's Hadamard groups must
// divide; 0 where no training run is configured (a preset for evaluation).
Recipe resolved(const RecipeSpec& spec, const model::MatmulPoints& points, std::uint64_t seed,
                std::size_t sequence_length) {
  const std::vector<PointName> names = recipe_points(points);
  Recipe recipe;
  try {
    recipe = Recipe{spec.preset, seed, resolve(spec, names), spec.accumulate, spec.accumulate_attention, spec.hadamard};
  } catch (const quant::SettingsError& e) {
    throw ConfigError(e.what());
  }
  check_accumulation(recipe, points, {spec.accumulate_origin, spec.accumulate_attention_origin});
  check_hadamard_layers(recipe.hadamard, points, sequence_length);
  return recipe;
}

// recipe.json's "hadamard", written where some GEMM is transformed; recipe_from_json reports the throw.
nlohmann::json hadamard_to_json(const HadamardSpec& spec) {
  nlohmann::json gemms = nlohmann::json::array();
  for (std::size_t g = 0; g < kGemmCount; ++g) {
    if (spec.gemms[g]) gemms.push_back(std::string(kGemmNames[g]));
  }
  return {{"gemms", gemms}, {"size", spec.size}, {"signs", hadamard_signs_name(spec.signs)}, {"match", spec.match}};
}

HadamardSpec hadamard_from_json(const nlohmann::json& object, const std::string& source) {
  HadamardSpec spec;
  spec.origin = source;
  for (const nlohmann::json& name : object.at("gemms")) {
    const std::optional<Gemm> gemm = parse_gemm(name.get<std::string>());
    if (!gemm) throw std::invalid_argument("'hadamard.gemms' names no GEMM " + name.dump() + " (forward, dgrad, wgrad)");
    spec.gemms[static_cast<std::size_t>(*gemm)] = true;
  }
  spec.size = object.at("size").get<std::size_t>();
  const std::string signs = object.at("signs").get<std::string>();
  if (const auto parsed = parse_hadamard_signs(signs)) {
    spec.signs = *parsed;
  } else {
    throw std::invalid_argument("'hadamard.signs' is \"" + signs + "\", not te, seeded or none");
  }
  spec.match = object.at("match").get<std::string>();
  check_hadamard_values(spec);
  return spec;
}

// recipe.json's "accumulate": every Linear GEMM's model by name, and the attention products' where
// it is not FP32's (so that the files of recipes without one stay as they were). recipe_from_json
// reports the throw.
nlohmann::json accumulation_to_json(const Recipe& recipe) {
  nlohmann::json object = nlohmann::json::object();
  for (std::size_t g = 0; g < kGemmCount; ++g) {
    object[std::string(kGemmNames[g])] = format::accumulator_name(recipe.accumulate[g]);
  }
  if (recipe.accumulate_attention.emulated()) {
    object[std::string(kAttentionAccumulateKey)] = format::accumulator_name(recipe.accumulate_attention);
  }
  return object;
}

void accumulation_from_json(const nlohmann::json& object, Recipe& recipe) {
  if (!object.is_object()) throw std::invalid_argument("'accumulate' must be an object, got " + object.dump());
  for (const auto& item : object.items()) {
    if (!parse_gemm(item.key()) && item.key() != kAttentionAccumulateKey) {
      throw std::invalid_argument("'accumulate' names no GEMM '" + item.key() + "' (forward, dgrad, wgrad, attention)");
    }
  }
  for (std::size_t g = 0; g < kGemmCount; ++g) {
    recipe.accumulate[g] = format::parse_accumulator(object.at(std::string(kGemmNames[g])).get<std::string>());
  }
  if (const auto attention = object.find(std::string(kAttentionAccumulateKey)); attention != object.end()) {
    recipe.accumulate_attention = format::parse_accumulator(attention->get<std::string>());
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

// One point's settings in recipe.json, and back; recipe_from_json reports the throw.
nlohmann::json settings_to_json(const quant::PointSettings& s) {
  nlohmann::json json = {{"enabled", s.enabled},
                         {"format", s.format_name},
                         {"rounding", format::rounding_name(s.rounding)},
                         {"scaling", quant::scaling_name(s.scaling)},
                         {"history", s.history},
                         {"amax", quant::amax_name(s.amax)},
                         {"margin", s.margin},
                         {"block", s.block == quant::kAxisBlock ? nlohmann::json(quant::kAxisBlockName)
                                                                : nlohmann::json(s.block)},
                         {"scale_rule", quant::scale_rule_name(s.scale_rule)}};
  // Only where it is not E8M0: the recipe.json files of MX and earlier runs stay as they were.
  if (s.scale_format != quant::BlockScaleFormat::e8m0) json["scale_format"] = quant::scale_format_name(s.scale_format);
  // Likewise only where stochastic rounding keeps fewer than all 32 random bits.
  if (s.sr_bits != quant::kMaxRandomBits) json["sr_bits"] = s.sr_bits;
  if (s.tiles) json["tile"] = true;
  return json;
}

quant::PointSettings settings_from_json(const nlohmann::json& e, const std::string& where) {
  SettingsPatch patch;
  patch.enabled = e.at("enabled").get<bool>();
  patch.format = e.at("format").get<std::string>();
  patch.rounding = format::parse_rounding(e.at("rounding").get<std::string>()).value();
  patch.scaling = quant::parse_scaling(e.at("scaling").get<std::string>()).value();
  patch.history = recipe_integer<std::size_t>(e, "history");
  patch.amax = quant::parse_amax(e.at("amax").get<std::string>()).value();
  patch.margin = recipe_integer<int>(e, "margin");
  const bool axis = e.at("block") == quant::kAxisBlockName;
  patch.block = axis ? quant::kAxisBlock : recipe_integer<std::size_t>(e, "block");
  if (!axis && patch.block == 0) throw std::invalid_argument("'block' must be at least 1 or \"axis\", got 0");
  patch.scale_format = quant::parse_scale_format(e.value("scale_format", "e8m0")).value();
  // Files written before a per-tensor scaling reset its scale format may hold a delayed point's
  // leftover fp32_pow2, which its run never used: read as the FP32 scale it was.
  if (*patch.scaling == quant::Scaling::delayed && *patch.scale_format == quant::BlockScaleFormat::fp32_pow2) {
    patch.scale_format = quant::BlockScaleFormat::e8m0;
  }
  // Written for every point, but a rule only where the scale format takes one.
  if (quant::takes_scale_rule(*patch.scale_format)) {
    patch.scale_rule = quant::parse_scale_rule(e.at("scale_rule").get<std::string>()).value();
  }
  if (e.contains("sr_bits")) patch.sr_bits = recipe_integer<int>(e, "sr_bits");
  if (e.contains("tile")) patch.tiles = e.at("tile").get<bool>();
  quant::PointSettings settings;
  patch.apply_to(settings, where);
  return settings;
}

}  // namespace

bool Recipe::any_enabled() const {
  const auto enabled = [](const std::optional<quant::PointSettings>& s) { return s && s->enabled; };
  return std::any_of(points.begin(), points.end(), [&](const ResolvedPoint& p) {
    return p.settings.enabled || std::any_of(p.by_gemm.begin(), p.by_gemm.end(), enabled);
  });
}

const format::AccumulatorModel& Recipe::accumulation(std::size_t matmul_index, Gemm gemm) const {
  static const format::AccumulatorModel kFp32{};
  for (const Role role : gemm_operands(gemm)) {
    if (!points.at(operand_index(matmul_index, role)).settings_for(gemm).enabled) return kFp32;
  }
  return accumulate[static_cast<std::size_t>(gemm)];
}

const format::AccumulatorModel& Recipe::attention_accumulation(const model::MatmulPoints& matmuls, std::size_t layer,
                                                               model::AttentionGemm gemm) const {
  static const format::AccumulatorModel kFp32{};
  for (const model::Operand operand : model::attention_gemm_operands(gemm)) {
    if (!points.at(matmuls.attention(layer, operand).index).settings.enabled) return kFp32;
  }
  return accumulate_attention;
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
    names.push_back({point.name, role, on, matmul});
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
  const auto sequence_length = static_cast<std::size_t>(config.block_size);
  for (const PhaseSpec& phase : table.phases) {
    schedule.phases.push_back(Phase{phase.start, resolved(phase.spec, points, seed, sequence_length)});
  }
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
    return resolved(recipe::preset(preset), points, seed, 0);
  } catch (const quant::SettingsError& e) {
    throw ConfigError(std::string("--recipe: ") + e.what());
  }
}

nlohmann::json recipe_to_json(const Recipe& recipe) {
  nlohmann::json points = nlohmann::json::array();
  for (const ResolvedPoint& p : recipe.points) {
    nlohmann::json entry = settings_to_json(p.settings);
    entry["name"] = p.name;
    // Only where some GEMM's copy differs: other recipes' files stay as they were.
    if (p.differs_by_gemm()) {
      nlohmann::json gemms = nlohmann::json::object();
      for (std::size_t g = 0; g < kGemmCount; ++g) {
        if (p.by_gemm[g]) gemms[std::string(kGemmNames[g])] = settings_to_json(*p.by_gemm[g]);
      }
      entry["gemms"] = gemms;
    }
    points.push_back(entry);
  }
  nlohmann::json json = {{"preset", recipe.preset}, {"seed", recipe.seed}, {"points", points}};
  // Only where it says something: an FP32-accumulating recipe's file stays byte for byte as before.
  if (emulated(recipe.accumulate) || recipe.accumulate_attention.emulated()) {
    json["accumulate"] = accumulation_to_json(recipe);
  }
  if (recipe.hadamard.any()) json["hadamard"] = hadamard_to_json(recipe.hadamard);
  return json;
}

Recipe recipe_from_json(const nlohmann::json& json, const model::MatmulPoints& points, const std::string& source) {
  try {
    Recipe recipe{json.at("preset").get<std::string>(), recipe_integer<std::uint64_t>(json, "seed"), {}, {}, {}, {}};
    if (const auto accumulate = json.find("accumulate"); accumulate != json.end()) {
      accumulation_from_json(*accumulate, recipe);
    }
    if (const auto hadamard = json.find("hadamard"); hadamard != json.end()) {
      recipe.hadamard = hadamard_from_json(*hadamard, source);
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
      ResolvedPoint point{name, settings_from_json(e, source + ": " + name), {}};
      if (const auto gemms = e.find("gemms"); gemms != e.end()) {
        for (const auto& item : gemms->items()) {
          const std::optional<Gemm> gemm = parse_gemm(item.key());
          if (!gemm) throw std::invalid_argument("'gemms' names no GEMM '" + item.key() + "' (forward, dgrad, wgrad)");
          point.by_gemm[static_cast<std::size_t>(*gemm)] =
              settings_from_json(item.value(), source + ": " + name + " (" + item.key() + " copy)");
        }
      }
      recipe.points.push_back(point);
    }
    check_points(recipe.points, recipe_points(points));
    AccumulationOrigins origins{{}, source};
    origins.gemms.fill(source);
    try {
      check_accumulation(recipe, points, origins);
      check_hadamard_layers(recipe.hadamard, points, 0);
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
