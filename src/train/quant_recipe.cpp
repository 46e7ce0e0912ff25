#include "train/quant_recipe.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "format/parse.hpp"
#include "io/json_integer.hpp"
#include "io/safetensors.hpp"
#include "quant/mx.hpp"
#include "quant/point_quantizer.hpp"
#include "train/nearest_name.hpp"

namespace altgrad::train {
namespace {

using quant::Role;
using quant::SettingsPatch;

constexpr std::array<std::string_view, 3> kRoleNames = {"act", "weight", "grad"};
constexpr std::array<std::string_view, 7> kQuantKeys = {"preset", "seed", "act", "weight", "grad", "override", "phase"};
constexpr std::array<std::string_view, 6> kPhaseKeys = {"start", "preset", "act", "weight", "grad", "override"};
constexpr std::array<std::string_view, 9> kSettingKeys = {"enabled", "format", "rounding", "scaling", "history",
                                                          "amax", "margin", "block", "scale_rule"};

std::string where(const toml::node& node) {
  const toml::source_region& region = node.source();
  const std::string file = region.path ? *region.path : std::string("config");
  return file + ":" + std::to_string(region.begin.line);
}

std::string type_of(const toml::node& node) {
  std::ostringstream out;
  out << node.type();
  return out.str();
}

[[noreturn]] void bad_value(const toml::node& node, std::string_view key, const std::string& expected) {
  std::ostringstream value;
  node.visit([&](const auto& v) { value << v; });
  throw ConfigError(where(node) + ": quant: " + std::string(key) + " = " + value.str() + " is not valid; expected " +
                    expected);
}

template <typename Names>
std::string joined(const Names& names, std::string_view separator = " | ") {
  std::string out;
  for (const auto name : names) out += (out.empty() ? "" : std::string(separator)) + std::string(name);
  return out;
}

[[noreturn]] void unknown_key(const toml::node& node, std::string_view key, std::span<const std::string_view> valid) {
  std::string message = where(node) + ": quant: unknown key '" + std::string(key) + "'";
  if (const auto near = nearest_name(key, valid)) message += " (did you mean '" + std::string(*near) + "'?)";
  throw ConfigError(message + "; valid keys: " + joined(valid, ", "));
}

std::string text_of(const toml::node& node, std::string_view key, const std::string& expected) {
  if (const auto text = node.value_exact<std::string>()) return *text;
  bad_value(node, key, expected);
}

std::int64_t integer_of(const toml::node& node, std::string_view key, std::int64_t lo, std::int64_t hi) {
  const auto value = node.value_exact<std::int64_t>();
  if (!value || *value < lo || *value > hi) {
    bad_value(node, key, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return *value;
}

template <typename Enum, typename Parse, typename Names>
Enum choice_of(const toml::node& node, std::string_view key, Parse parse, const Names& names) {
  const std::string expected = "one of " + joined(names);
  if (const auto parsed = parse(text_of(node, key, expected))) return *parsed;
  bad_value(node, key, expected);
}

void check_format(const std::string& name, const toml::node& node) {
  try {
    const format::FormatSpec spec = format::parse_format(name);
    if (const std::string why = format::validation_error(spec); !why.empty()) throw format::FormatError(why);
  } catch (const format::FormatError& e) {
    throw ConfigError(where(node) + ": quant: format = \"" + name + "\": " + e.what());
  }
}

void read_setting(SettingsPatch& patch, std::string_view key, const toml::node& node) {
  if (key == "enabled") {
    const auto value = node.value_exact<bool>();
    if (!value) bad_value(node, key, "true or false");
    patch.enabled = *value;
  } else if (key == "format") {
    patch.format = text_of(node, key, "a format name such as \"e4m3\" (altgrad formats lists them)");
    check_format(*patch.format, node);
  } else if (key == "rounding") {
    patch.rounding = choice_of<format::Rounding>(node, key, format::parse_rounding, format::kRoundingNames);
  } else if (key == "scaling") {
    patch.scaling = choice_of<quant::Scaling>(node, key, quant::parse_scaling, quant::kScalingNames);
  } else if (key == "history") {
    patch.history = static_cast<std::size_t>(integer_of(node, key, 1, 1024));
  } else if (key == "amax") {
    patch.amax = choice_of<quant::AmaxAlgorithm>(node, key, quant::parse_amax, quant::kAmaxNames);
  } else if (key == "margin") {
    patch.margin = static_cast<int>(integer_of(node, key, -64, 64));
  } else if (key == "block") {
    patch.block = static_cast<std::size_t>(integer_of(node, key, 1, quant::kMaxMxBlock));
  } else if (key == "scale_rule") {
    patch.scale_rule = choice_of<quant::MxScaleRule>(node, key, quant::parse_scale_rule, quant::kScaleRuleNames);
  }
}

const toml::table& table_of(const toml::node& node, std::string_view name) {
  if (const toml::table* table = node.as_table()) return *table;
  throw ConfigError(where(node) + ": quant: " + std::string(name) + " must be a table, got " + type_of(node));
}

// A role table or an override: settings keys (plus `match` for an override).
SettingsPatch read_patch(const toml::table& table, bool is_override) {
  static const std::vector<std::string_view> kOverrideKeys = [] {
    std::vector<std::string_view> keys{"match"};
    keys.insert(keys.end(), kSettingKeys.begin(), kSettingKeys.end());
    return keys;
  }();
  SettingsPatch patch;
  for (auto&& [key, node] : table) {
    if (is_override && key.str() == "match") continue;
    if (std::find(kSettingKeys.begin(), kSettingKeys.end(), key.str()) == kSettingKeys.end()) {
      if (is_override) unknown_key(node, key.str(), kOverrideKeys);
      unknown_key(node, key.str(), kSettingKeys);
    }
    read_setting(patch, key.str(), node);
  }
  return patch;
}

void read_overrides(quant::RecipeSpec& spec, const toml::node& node) {
  const toml::array* entries = node.as_array();
  if (!entries) throw ConfigError(where(node) + ": quant: override must be an array of tables ([[quant.override]])");
  for (const toml::node& entry : *entries) {
    const toml::table& table = table_of(entry, "each [[quant.override]]");
    const toml::node* match = table.get("match");
    if (!match) throw ConfigError(where(entry) + ": quant: [[quant.override]] needs match = \"<glob over point names>\"");
    const std::string pattern = text_of(*match, "match", "a glob such as \"h.*.attn.probs\"");
    spec.overrides.push_back({pattern, read_patch(table, true), where(*match)});
  }
}

void apply_patch(quant::PointSettings& settings, const SettingsPatch& patch, const std::string& origin) {
  try {
    patch.apply_to(settings, origin);
  } catch (const quant::RecipeError& e) {
    throw ConfigError(e.what());
  }
}

// A recipe table: [quant] itself, or one [[quant.phase]] entry on top of `base` (the previous
// phase's recipe) when it names no preset. `keys` are the table's valid keys.
template <std::size_t N>
quant::RecipeSpec read_spec(const toml::table& quant, quant::RecipeSpec base, const std::array<std::string_view, N>& keys) {
  quant::RecipeSpec spec = std::move(base);
  if (const toml::node* preset = quant.get("preset")) {
    const std::string name = text_of(*preset, "preset", "one of " + joined(quant::preset_names()));
    try {
      spec = quant::preset(name);
    } catch (const quant::RecipeError& e) {
      throw ConfigError(where(*preset) + ": quant: " + e.what());
    }
  }
  for (auto&& [key, node] : quant) {
    const auto role = std::find(kRoleNames.begin(), kRoleNames.end(), key.str());
    if (role != kRoleNames.end()) {
      const auto index = static_cast<std::size_t>(role - kRoleNames.begin());
      apply_patch(spec.roles[index], read_patch(table_of(node, key.str()), false), where(node));
    } else if (key.str() == "override") {
      read_overrides(spec, node);
    } else if (std::find(keys.begin(), keys.end(), key.str()) == keys.end()) {
      unknown_key(node, key.str(), keys);
    }
  }
  return spec;
}

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
  const toml::table& quant = config.quant.table();
  std::uint64_t seed = config.seed;
  if (const toml::node* node = quant.get("seed")) {
    seed = static_cast<std::uint64_t>(integer_of(*node, "seed", 0, std::numeric_limits<std::int64_t>::max()));
  }
  const model::MatmulPoints points(gpt_config(config));
  quant::RecipeSpec spec = read_spec(quant, quant::RecipeSpec{}, kQuantKeys);
  Schedule schedule{{Phase{0, resolved(spec, points, seed)}}};
  const toml::node* phases = quant.get("phase");
  if (!phases) return schedule;
  const toml::array* entries = phases->as_array();
  if (!entries || !entries->is_array_of_tables()) {
    throw ConfigError(where(*phases) + ": quant: phase must be an array of tables ([[quant.phase]])");
  }
  for (const toml::node& entry : *entries) {
    const toml::table& table = *entry.as_table();
    const toml::node* start = table.get("start");
    if (!start) throw ConfigError(where(entry) + ": quant: [[quant.phase]] needs start = <the step it begins at>");
    const std::int64_t previous = schedule.phases.back().start;
    const std::optional<std::int64_t> step = start->value_exact<std::int64_t>();
    if (!step || *step <= previous || *step >= quant::PointQuantizer::kMaxSteps) {
      bad_value(*start, "start", "an integer step after the previous phase's start (" + std::to_string(previous) + ")");
    }
    spec = read_spec(table, spec, kPhaseKeys);
    schedule.phases.push_back(Phase{*step, resolved(spec, points, seed)});
  }
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

}  // namespace altgrad::train
