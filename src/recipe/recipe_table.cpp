#include "recipe/recipe_table.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#include "config/config_error.hpp"
#include "config/nearest_name.hpp"
#include "format/accumulator.hpp"
#include "format/parse.hpp"
#include "recipe/hadamard_recipe.hpp"
#include "quant/mx.hpp"
#include "quant/point_quantizer.hpp"

namespace altgrad::recipe {
namespace {

using config::ConfigError;
using config::nearest_name;

constexpr std::array<std::string_view, 9> kQuantKeys = {"preset", "seed",  "act",        "weight",  "grad",
                                                        "override", "phase", "accumulate", "hadamard"};
constexpr std::array<std::string_view, 8> kPhaseKeys = {"start",    "preset",     "act",     "weight",
                                                        "grad",     "override",   "accumulate", "hadamard"};
// [quant.accumulate]'s keys: the Linear GEMMs, then the attention products.
constexpr std::array<std::string_view, kGemmCount + 1> kAccumulateKeys = {kGemmNames[0], kGemmNames[1], kGemmNames[2],
                                                                         kAttentionAccumulateKey};
constexpr std::array<std::string_view, 12> kSettingKeys = {"enabled", "format", "rounding",   "scaling",
                                                           "history", "amax",   "margin",     "block",
                                                           "scale_rule", "scale_format", "sr_bits", "tile"};

// "file:line"; a table built in code (a recipe given to Python as a dict) has neither: "config".
std::string where(const toml::node& node) {
  const toml::source_region& region = node.source();
  const std::string file = region.path ? *region.path : std::string("config");
  return region.begin.line > 0 ? file + ":" + std::to_string(region.begin.line) : file;
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

// `table`: the key's table as a prefix ("accumulate."), or "" for [quant]'s own and its tables' keys.
[[noreturn]] void unknown_key(const toml::node& node, std::string_view key, std::span<const std::string_view> valid,
                              std::string_view table = "") {
  const std::string prefix(table);
  std::string message = where(node) + ": quant: unknown key '" + prefix + std::string(key) + "'";
  if (const auto near = nearest_name(key, valid)) message += " (did you mean '" + prefix + std::string(*near) + "'?)";
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

// A block length, or "axis": one block along the whole reduction axis.
std::size_t block_of(const toml::node& node, std::string_view key) {
  if (node.value_exact<std::string>() == quant::kAxisBlockName) return quant::kAxisBlock;
  const auto value = node.value_exact<std::int64_t>();
  if (!value || *value < 1 || *value > static_cast<std::int64_t>(quant::kMaxMxBlock)) {
    bad_value(node, key, "an integer in [1, " + std::to_string(quant::kMaxMxBlock) + "] or \"" +
                             std::string(quant::kAxisBlockName) + "\" (one block along the whole reduction axis)");
  }
  return static_cast<std::size_t>(*value);
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
    patch.block = block_of(node, key);
  } else if (key == "scale_rule") {
    patch.scale_rule = choice_of<quant::MxScaleRule>(node, key, quant::parse_scale_rule, quant::kScaleRuleNames);
  } else if (key == "scale_format") {
    patch.scale_format =
        choice_of<quant::BlockScaleFormat>(node, key, quant::parse_scale_format, quant::kScaleFormatNames);
  } else if (key == "sr_bits") {
    patch.sr_bits = static_cast<int>(integer_of(node, key, 1, quant::kMaxRandomBits));
  } else if (key == "tile") {
    const auto value = node.value_exact<bool>();
    if (!value) bad_value(node, key, "true or false");
    patch.tiles = *value;
  }
}

const toml::table& table_of(const toml::node& node, std::string_view name) {
  if (const toml::table* table = node.as_table()) return *table;
  throw ConfigError(where(node) + ": quant: " + std::string(name) + " must be a table, got " + type_of(node));
}

// A role table or an override: settings keys (plus `match` for an override).
SettingsPatch read_patch(const toml::table& table, bool is_override) {
  static const std::vector<std::string_view> kOverrideKeys = [] {
    std::vector<std::string_view> keys{"match", "gemm"};
    keys.insert(keys.end(), kSettingKeys.begin(), kSettingKeys.end());
    return keys;
  }();
  SettingsPatch patch;
  for (auto&& [key, node] : table) {
    if (is_override && (key.str() == "match" || key.str() == "gemm")) continue;
    if (std::find(kSettingKeys.begin(), kSettingKeys.end(), key.str()) == kSettingKeys.end()) {
      if (is_override) unknown_key(node, key.str(), kOverrideKeys);
      unknown_key(node, key.str(), kSettingKeys);
    }
    read_setting(patch, key.str(), node);
  }
  return patch;
}

void read_overrides(RecipeSpec& spec, const toml::node& node) {
  const toml::array* entries = node.as_array();
  if (!entries) throw ConfigError(where(node) + ": quant: override must be an array of tables ([[quant.override]])");
  for (const toml::node& entry : *entries) {
    const toml::table& table = table_of(entry, "each [[quant.override]]");
    const toml::node* match = table.get("match");
    if (!match) throw ConfigError(where(entry) + ": quant: [[quant.override]] needs match = \"<glob over point names>\"");
    const std::string pattern = text_of(*match, "match", "a glob such as \"h.*.attn.probs\"");
    std::optional<Gemm> gemm;
    if (const toml::node* name = table.get("gemm")) gemm = choice_of<Gemm>(*name, "gemm", parse_gemm, kGemmNames);
    spec.overrides.push_back({pattern, read_patch(table, true), where(*match), gemm});
  }
}

void apply_patch(quant::PointSettings& settings, const SettingsPatch& patch, const std::string& origin) {
  try {
    patch.apply_to(settings, origin);
  } catch (const quant::SettingsError& e) {
    throw ConfigError(e.what());
  }
}

// An accumulator name at `node`, read by `parse`: one GEMM's model or the whole recipe's.
template <typename Parse>
auto accumulator_of(const toml::node& node, const std::string& key, const std::string& expected, Parse parse) {
  const std::string text = text_of(node, key, expected);
  try {
    return parse(text);
  } catch (const format::AccumulatorError& e) {
    throw ConfigError(where(node) + ": quant: " + key + " = \"" + text + "\": " + e.what());
  }
}

constexpr std::string_view kAccumulateDocs = " (docs/quantization.md, \"GEMM accumulation\")";

// [quant.accumulate]: some of forward, dgrad, wgrad and attention, each one model.
void read_accumulate_table(RecipeSpec& spec, const toml::table& table) {
  const std::string expected = "an accumulator name such as \"hopper\"" + std::string(kAccumulateDocs);
  for (auto&& [key, value] : table) {
    const std::string name = "accumulate." + std::string(key.str());
    if (key.str() == kAttentionAccumulateKey) {
      spec.accumulate_attention = accumulator_of(value, name, expected, parse_gemm_accumulator);
      spec.accumulate_attention_origin = where(value);
      continue;
    }
    const std::optional<Gemm> gemm = parse_gemm(key.str());
    if (!gemm) unknown_key(value, key.str(), kAccumulateKeys, "accumulate.");
    const auto index = static_cast<std::size_t>(*gemm);
    spec.accumulate[index] = accumulator_of(value, name, expected, parse_gemm_accumulator);
    spec.accumulate_origin[index] = where(value);
  }
}

// `accumulate = "<model>"` for the three Linear GEMMs (the attention products keep their model, so
// that the recipes written before they had one mean what they meant), or a table.
void read_accumulate(RecipeSpec& spec, const toml::node& node) {
  if (const toml::table* table = node.as_table()) {
    read_accumulate_table(spec, *table);
    return;
  }
  const std::string expected =
      "an accumulator name such as \"hopper\" or \"hopper_te\", or a table of forward, dgrad, wgrad, attention" +
      std::string(kAccumulateDocs);
  spec.accumulate = accumulator_of(node, "accumulate", expected, parse_gemm_accumulation);
  spec.accumulate_origin.fill(where(node));
}

constexpr std::array<std::string_view, 4> kHadamardKeys = {"gemms", "size", "signs", "match"};

// `gemms = [...]`: Linear GEMM names. The attention's products are named apart, since they are
// refused for a reason of their own rather than as a typo.
std::array<bool, kGemmCount> hadamard_gemms_of(const toml::node& node) {
  const std::string expected = "an array of GEMM names: forward, dgrad, wgrad";
  const toml::array* names = node.as_array();
  if (!names) bad_value(node, "hadamard.gemms", expected);
  std::array<bool, kGemmCount> gemms{};
  for (const toml::node& entry : *names) {
    const std::string name = text_of(entry, "hadamard.gemms", expected);
    if (name == kAttentionAccumulateKey) {
      throw ConfigError(where(entry) + ": quant: hadamard.gemms names \"attention\": the attention products take no "
                        "Hadamard transform (Linear GEMMs only: forward, dgrad, wgrad)");
    }
    const std::optional<Gemm> gemm = parse_gemm(name);
    if (!gemm) {
      std::string message = where(entry) + ": quant: hadamard.gemms names no GEMM \"" + name + "\"";
      if (const auto near = nearest_name(name, kGemmNames)) message += " (did you mean \"" + std::string(*near) + "\"?)";
      throw ConfigError(message + "; expected " + expected);
    }
    gemms[static_cast<std::size_t>(*gemm)] = true;
  }
  return gemms;
}

// [quant.hadamard] (or a phase's): the whole element, keys left out at their defaults.
HadamardSpec read_hadamard(const toml::table& table) {
  HadamardSpec spec;
  spec.origin = where(table);
  const toml::node* gemms = table.get("gemms");
  if (!gemms) throw ConfigError(where(table) + ": quant: [quant.hadamard] needs gemms = [...] (forward, dgrad, wgrad)");
  for (auto&& [key, node] : table) {
    if (key.str() == "gemms") {
      spec.gemms = hadamard_gemms_of(node);
    } else if (key.str() == "size") {
      spec.size = static_cast<std::size_t>(integer_of(node, "hadamard.size", 1, 1 << 20));
    } else if (key.str() == "signs") {
      spec.signs = choice_of<HadamardSigns>(node, "hadamard.signs", parse_hadamard_signs, kHadamardSignsNames);
    } else if (key.str() == "match") {
      spec.match = text_of(node, "hadamard.match", "a glob over Linear layer names such as \"h.*.mlp.*\"");
    } else {
      unknown_key(node, key.str(), kHadamardKeys, "hadamard.");
    }
  }
  try {
    check_hadamard_values(spec);
  } catch (const quant::SettingsError& e) {
    throw ConfigError(e.what());
  }
  return spec;
}

// A recipe table: [quant] itself, or one [[quant.phase]] entry on top of `base` (the previous
// phase's recipe) when it names no preset. `keys` are the table's valid keys.
template <std::size_t N>
RecipeSpec read_spec(const toml::table& quant, RecipeSpec base, const std::array<std::string_view, N>& keys) {
  RecipeSpec spec = std::move(base);
  if (const toml::node* preset = quant.get("preset")) {
    const std::string name = text_of(*preset, "preset", "one of " + joined(preset_names()));
    try {
      spec = recipe::preset(name);
    } catch (const quant::SettingsError& e) {
      throw ConfigError(where(*preset) + ": quant: " + e.what());
    }
    spec.accumulate_origin.fill(where(*preset));  // a resolution error names the line that chose the preset
    spec.accumulate_attention_origin = where(*preset);
  }
  for (auto&& [key, node] : quant) {
    const auto role = std::find(kRoleNames.begin(), kRoleNames.end(), key.str());
    if (role != kRoleNames.end()) {
      const auto index = static_cast<std::size_t>(role - kRoleNames.begin());
      apply_patch(spec.roles[index], read_patch(table_of(node, key.str()), false), where(node));
    } else if (key.str() == "override") {
      read_overrides(spec, node);
    } else if (key.str() == "accumulate") {
      read_accumulate(spec, node);
    } else if (key.str() == "hadamard") {
      spec.hadamard = read_hadamard(table_of(node, "hadamard"));
    } else if (std::find(keys.begin(), keys.end(), key.str()) == keys.end()) {
      unknown_key(node, key.str(), keys);
    }
  }
  return spec;
}

}  // namespace

ScheduleSpec read_recipe_table(const toml::table& quant) {
  ScheduleSpec table;
  if (const toml::node* node = quant.get("seed")) {
    table.seed = static_cast<std::uint64_t>(integer_of(*node, "seed", 0, std::numeric_limits<std::int64_t>::max()));
  }
  table.phases.push_back({0, read_spec(quant, RecipeSpec{}, kQuantKeys)});
  const toml::node* phases = quant.get("phase");
  if (!phases) return table;
  const toml::array* entries = phases->as_array();
  if (!entries || !entries->is_array_of_tables()) {
    throw ConfigError(where(*phases) + ": quant: phase must be an array of tables ([[quant.phase]])");
  }
  for (const toml::node& entry : *entries) {
    const toml::table& phase = *entry.as_table();
    const toml::node* start = phase.get("start");
    if (!start) throw ConfigError(where(entry) + ": quant: [[quant.phase]] needs start = <the step it begins at>");
    const std::int64_t previous = table.phases.back().start;
    const std::optional<std::int64_t> step = start->value_exact<std::int64_t>();
    if (!step || *step <= previous || *step >= quant::PointQuantizer::kMaxSteps) {
      bad_value(*start, "start", "an integer step after the previous phase's start (" + std::to_string(previous) + ")");
    }
    table.phases.push_back({*step, read_spec(phase, table.phases.back().spec, kPhaseKeys)});
  }
  return table;
}

}  // namespace altgrad::recipe
