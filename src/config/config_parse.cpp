// Reading a config: TOML file → defaults overwritten key by key → --set overrides → validation.
// Each key remembers where its value came from, so that a rule broken by two keys (n_embd and
// n_head) can point at the lines or arguments that set them.
#include <charconv>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "config/config.hpp"
#include "config/config_fields.hpp"
#include "config/nearest_name.hpp"
#include "data/utf8.hpp"
#include "format/parse.hpp"
#include "io/toml_literal.hpp"

namespace altgrad::config {
namespace {

using schema::Field;

// key → "file.toml:12" or "--set key=value"; absent for defaults.
using Origins = std::map<std::string, std::string, std::less<>>;

std::string file_origin(std::string_view source, const toml::source_region& region) {
  return std::string(source) + ":" + std::to_string(region.begin.line);
}

toml::table parse_toml(std::string_view text, std::string_view source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw ConfigError(file_origin(source, e.source()) + ": TOML syntax error: " + std::string(e.description()));
  }
}

std::vector<std::string_view> all_keys() {
  std::vector<std::string_view> keys;
  for (const Field& field : schema::fields()) keys.push_back(field.key);
  return keys;
}

[[noreturn]] void unknown_key(std::string_view key, bool is_table, const std::string& origin) {
  if (is_table) {
    throw ConfigError(origin + ": unknown table [" + std::string(key) +
                      "] (the only table allowed is [quant]; every other setting is a top-level key)");
  }
  std::string message = origin + ": unknown key '" + std::string(key) + "'";
  if (const auto suggestion = nearest_name(key, all_keys())) message += " (did you mean '" + std::string(*suggestion) + "'?)";
  throw ConfigError(message);
}

void read_quant(TrainConfig& config, toml::node& node, const std::string& origin) {
  toml::table* table = node.as_table();
  if (!table) {
    std::ostringstream type;
    type << node.type();
    throw ConfigError(origin + ": quant must be a table ([quant]), got " + type.str());
  }
  config.quant = QuantTable(std::move(*table));  // moved, so its nodes keep their file positions
}

void apply_table(TrainConfig& config, toml::table& table, std::string_view source, Origins& origins) {
  for (auto&& [key, node] : table) {
    const std::string origin = file_origin(source, key.source().begin.line ? key.source() : node.source());
    if (key.str() == "quant") {
      read_quant(config, node, origin);
    } else if (const Field* field = schema::find_field(key.str())) {
      schema::read_value(*field, node, config, origin);
    } else {
      unknown_key(key.str(), node.is_table(), origin);
    }
    origins.insert_or_assign(std::string(key.str()), origin);
  }
}

std::string_view trim(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

bool expects_string(const Field& field) {
  return std::holds_alternative<schema::TextField>(field.type) ||
         std::visit([](const auto& spec) { return requires { spec.names; }; }, field.type);
}

// The number `text` spells from start to end, if it does (C++'s syntax: .001 and 1. too).
std::optional<double> number_text(std::string_view text) {
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return number;
}

// A --set value as a one-entry table {v = value}, read with TOML syntax so that 3e-4, 1_000, true
// and "quoted" mean what they mean in a file. A string key also takes bare text (--set
// out_dir=runs/a); a number key also takes what C++ reads as a number (.001). Anything else is kept
// as a string so that the type check reports it with the value.
toml::table override_value(const Field& field, std::string_view text) {
  toml::table holder;
  try {
    holder = toml::parse("v = " + std::string(text), std::string_view("--set"));
  } catch (const toml::parse_error&) {
    holder.clear();
  }
  const toml::node* node = holder.size() == 1 ? holder.get("v") : nullptr;  // one value, nothing more
  if (node && (node->is_string() || !expects_string(field))) return holder;
  if (std::holds_alternative<schema::RealField>(field.type)) {
    if (const auto number = number_text(text)) return toml::table{{"v", *number}};
  }
  return toml::table{{"v", std::string(text)}};
}

void apply_override(TrainConfig& config, std::string_view argument, Origins& origins) {
  const std::string origin = "--set " + std::string(argument);
  // A config file must be UTF-8 (TOML's rule); so must a value that config_to_toml will write.
  if (const auto problem = data::find_invalid_utf8(argument)) {
    throw ConfigError(origin + ": invalid UTF-8 at byte " + std::to_string(problem->offset) + ": " +
                      std::string(problem->reason));
  }
  const auto equals = argument.find('=');
  if (equals == std::string_view::npos) throw ConfigError(origin + ": expected key=value");
  const std::string_view key = trim(argument.substr(0, equals));
  if (key.empty()) throw ConfigError(origin + ": the key before '=' is empty");
  if (key == "quant" || key.starts_with("quant.")) {
    throw ConfigError(origin + ": the [quant] table cannot be set with --set; edit it in the config file");
  }
  const Field* field = schema::find_field(key);
  if (!field) unknown_key(key, false, origin);
  const toml::table value = override_value(*field, trim(argument.substr(equals + 1)));
  schema::read_value(*field, *value.get("v"), config, origin);
  origins.insert_or_assign(std::string(key), origin);
}

// "n_embd = 130" for messages about rules between keys.
std::string key_value(const TrainConfig& config, std::string_view key) {
  return std::string(key) + " = " + schema::value_literal(*schema::find_field(key), config);
}

// A rule between two keys is broken: the message starts with where they were set.
[[noreturn]] void relation_broken(const TrainConfig& config, const Origins& origins, std::string_view first,
                                  std::string_view second, const std::string& rule) {
  std::string where;
  for (const auto key : {first, second}) {
    const auto found = origins.find(key);
    if (found == origins.end() || where.find(found->second) != std::string::npos) continue;
    where += (where.empty() ? "" : " and ") + found->second;
  }
  throw ConfigError((where.empty() ? "config" : where) + ": " + key_value(config, first) + " and " +
                    key_value(config, second) + " break a rule: " + rule);
}

void check_fields(const TrainConfig& config, const Origins& origins) {
  for (const Field& field : schema::fields()) {
    if (const auto problem = schema::value_problem(field, config)) {
      const auto found = origins.find(field.key);
      throw ConfigError((found == origins.end() ? std::string("config") : found->second) + ": " + *problem);
    }
  }
}

// The moment-storage keys act on AdamW's own step only: the other optimizers refuse any value but
// the default rather than ignore it (the bit-space optimizers' AdamW part keeps FP32 moments).
void check_moment_storage_relations(const TrainConfig& config, const Origins& origins) {
  if (config.optimizer == OptimizerKind::adamw) return;
  const TrainConfig defaults;
  const std::pair<std::string_view, bool> changed[] = {
      {"adam_m_format", config.adam_m_format != defaults.adam_m_format},
      {"adam_v_format", config.adam_v_format != defaults.adam_v_format},
      {"adam_state_group", config.adam_state_group != defaults.adam_state_group},
      {"adam_state_rounding", config.adam_state_rounding != defaults.adam_state_rounding},
  };
  for (const auto& [key, differs] : changed) {
    if (differs) {
      relation_broken(config, origins, key, "optimizer",
                      std::string(key) + " applies only to optimizer = \"adamw\" (the others keep FP32 state)");
    }
  }
}

void check_relations(const TrainConfig& config, const Origins& origins) {
  if (config.n_embd % config.n_head != 0) {
    relation_broken(config, origins, "n_embd", "n_head", "n_embd must be a multiple of n_head");
  }
  if (config.min_lr > config.learning_rate) {
    relation_broken(config, origins, "min_lr", "learning_rate", "min_lr must not exceed learning_rate");
  }
  if (config.lr_decay_iters <= config.warmup_iters) {
    relation_broken(config, origins, "lr_decay_iters", "warmup_iters",
                    "lr_decay_iters must be greater than warmup_iters (the cosine decay runs between them)");
  }
  if (config.optimizer == OptimizerKind::sgd && config.nesterov && config.momentum == 0.0) {
    relation_broken(config, origins, "nesterov", "momentum", "nesterov = true needs momentum > 0 (as in PyTorch)");
  }
  if (!config.master_weights && config.optimizer != OptimizerKind::gridwalk) {
    relation_broken(config, origins, "master_weights", "optimizer",
                    "master_weights = false needs optimizer = \"gridwalk\" (the only optimizer that moves weights as codes)");
  }
  check_moment_storage_relations(config, origins);
  if (config.grad_reduce_format.empty() && config.grad_reduce_sum != TrainConfig{}.grad_reduce_sum) {
    relation_broken(config, origins, "grad_reduce_sum", "grad_reduce_format",
                    "grad_reduce_sum applies only with a grad_reduce_format (\"\" sums the gradients in FP32)");
  }
  if (config.adamw_learning_rate > 0.0 && !optim::is_bit_space(config.optimizer)) {
    relation_broken(config, origins, "adamw_learning_rate", "optimizer",
                    "adamw_learning_rate applies only to the bit-space optimizers (adamw and sgd use learning_rate "
                    "for every tensor)");
  }
}

// grid_format and range_fit_format take any format name the format grammar accepts (docs/formats.md).
void check_format_key(const Origins& origins, std::string_view key, const std::string& value) {
  try {
    (void)format::parse_format(value);
  } catch (const std::exception& e) {
    const auto found = origins.find(key);
    throw ConfigError((found == origins.end() ? std::string("config") : found->second) + ": " + std::string(key) +
                      " = " + io::toml_string(value) + " is not a format: " + e.what());
  }
}

// adam_m_format and adam_v_format: "fp32" or a format name; exp_avg takes both signs, so an
// unsigned format (e8m0fnu) could not hold it, while exp_avg_sq >= 0 may use one.
void check_moment_format(const Origins& origins, std::string_view key, const std::string& value, bool needs_sign) {
  if (value == optim::kFp32State) return;
  check_format_key(origins, key, value);
  if (needs_sign && !format::make_format(format::parse_format(value)).has_sign) {
    const auto found = origins.find(key);
    throw ConfigError((found == origins.end() ? std::string("config") : found->second) + ": " + std::string(key) +
                      " = " + io::toml_string(value) + " is unsigned, but exp_avg takes both signs (use a signed " +
                      "format or \"fp32\")");
  }
}

// grad_reduce_format: "" or a signed format name; a gradient takes both signs.
void check_grad_reduce_format(const Origins& origins, const std::string& value) {
  if (value.empty()) return;
  constexpr std::string_view key = "grad_reduce_format";
  if (value == "fp32") {
    const auto found = origins.find(key);
    throw ConfigError((found == origins.end() ? std::string("config") : found->second) + ": " + std::string(key) +
                      " = " + io::toml_string(value) + " is not a format name: the FP32 sum, as without the " +
                      "reduction, is grad_reduce_format = \"\" (the default)");
  }
  check_format_key(origins, key, value);
  if (!format::make_format(format::parse_format(value)).has_sign) {
    const auto found = origins.find(key);
    throw ConfigError((found == origins.end() ? std::string("config") : found->second) + ": " + std::string(key) +
                      " = " + io::toml_string(value) + " is unsigned, but a gradient takes both signs (use a signed " +
                      "format, or \"\" for the FP32 sum)");
  }
}

void validate(const TrainConfig& config, const Origins& origins) {
  check_fields(config, origins);
  check_relations(config, origins);
  check_format_key(origins, "grid_format", config.grid_format);
  check_format_key(origins, "range_fit_format", config.range_fit_format);
  check_moment_format(origins, "adam_m_format", config.adam_m_format, true);
  check_moment_format(origins, "adam_v_format", config.adam_v_format, false);
  check_grad_reduce_format(origins, config.grad_reduce_format);
}

std::string read_text(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) throw ConfigError(file.string() + ": no such config file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(file.string() + ": cannot open the config file for reading");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TrainConfig parse_config(std::string_view toml_text, std::string_view source_name,
                         std::span<const std::string> overrides) {
  TrainConfig config;
  Origins origins;
  toml::table table = parse_toml(toml_text, source_name);
  apply_table(config, table, source_name, origins);
  for (const auto& argument : overrides) apply_override(config, argument, origins);
  validate(config, origins);
  return config;
}

TrainConfig load_config(const std::filesystem::path& file, std::span<const std::string> overrides) {
  return parse_config(read_text(file), file.string(), overrides);
}

void validate_config(const TrainConfig& config) { validate(config, Origins{}); }

}  // namespace altgrad::config
