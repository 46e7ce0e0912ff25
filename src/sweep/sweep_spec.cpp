#include "sweep/sweep_spec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>

#include "config/nearest_name.hpp"
#include "io/toml_literal.hpp"
#include "sweep/sweep_error.hpp"

namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 7> kTopKeys = {"base", "set", "recipes", "runs", "axes", "search", "criteria"};
constexpr std::array<std::string_view, 5> kCriterionKeys = {"baseline", "max_gap_pct", "min_seeds", "min_steps", "groups"};
constexpr std::array<std::string_view, 7> kSearchKeys = {"kind", "key", "low", "high", "bisections", "steps",
                                                         "loss_multiple"};

using Recipes = std::map<std::string, Settings, std::less<>>;

struct Reader {
  std::string source;  // the file's name in messages
  fs::path file;

  std::string where(const toml::node& node) const { return origin_of(source, node.source()); }
  std::string where(const toml::key& key, const toml::node& node) const {
    return origin_of(source, key.source().begin.line ? key.source() : node.source());
  }

  [[noreturn]] void fail(const std::string& origin, const std::string& what) const { throw SweepError(origin + ": " + what); }

  template <std::size_t N>
  void check_known(const toml::key& key, const toml::node& node, const std::array<std::string_view, N>& known,
                   const std::string& context) const {
    for (const auto k : known) {
      if (key.str() == k) return;
    }
    std::string message = "unknown key '" + std::string(key.str()) + "' in " + context;
    if (const auto near = config::nearest_name(key.str(), known)) message += " (did you mean '" + std::string(*near) + "'?)";
    fail(where(key, node), message);
  }

  Settings base(const toml::table& root, std::string& label) const {
    const toml::node* node = root.get("base");
    if (!node) {
      label = "defaults";
      return {};
    }
    if (const auto* table = node->as_table()) {
      label = "inline";
      return flatten(*table, source);
    }
    const auto* path = node->as_string();
    if (!path) fail(where(*node), "base must be a config file path (a string) or a [base] table");
    label = path->get();
    const fs::path resolved = fs::path(path->get()).is_absolute() ? fs::path(path->get()) : file.parent_path() / path->get();
    std::ifstream in(resolved, std::ios::binary);
    if (!in) fail(where(*node), "base = " + io::toml_string(path->get()) + ": cannot read " + resolved.string());
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    try {
      return flatten(toml::parse(text, resolved.string()), resolved.string());
    } catch (const toml::parse_error& e) {
      fail(origin_of(resolved.string(), e.source()), "TOML syntax error: " + std::string(e.description()));
    }
  }

  // [set]: keys every run sets on top of the base, not named in run names.
  Settings common(const toml::table& root) const {
    const toml::node* node = root.get("set");
    if (!node) return {};
    if (!node->is_table()) fail(where(*node), "set must be a table of config keys ([set])");
    return flatten(*node->as_table(), source);
  }

  Recipes recipes(const toml::table& root) const {
    Recipes found;
    const toml::node* node = root.get("recipes");
    if (!node) return found;
    const auto* table = node->as_table();
    if (!table) fail(where(*node), "recipes must be a table of tables ([recipes.NAME])");
    for (auto&& [name, recipe] : *table) {
      const auto* settings = recipe.as_table();
      if (!settings) fail(where(name, recipe), "recipes." + std::string(name.str()) + " must be a table of config keys");
      found.emplace(std::string(name.str()), flatten(*settings, source));
    }
    return found;
  }

  const Settings& recipe(const Recipes& recipes, const toml::node& name_node) const {
    const auto* name = name_node.as_string();
    if (!name) fail(where(name_node), "recipe must be the name of a [recipes.NAME] table");
    const auto found = recipes.find(name->get());
    if (found == recipes.end()) {
      std::vector<std::string_view> names;
      for (const auto& [n, s] : recipes) names.push_back(n);
      std::string message = "recipe = " + io::toml_string(name->get()) + " names no [recipes." + name->get() + "] table";
      if (const auto near = config::nearest_name(name->get(), names)) message += " (did you mean '" + std::string(*near) + "'?)";
      fail(where(name_node), message);
    }
    return found->second;
  }

  // A choice that sets `key` to `value`; a recipe name brings its recipe's settings.
  Choice choice(const std::string& key, const toml::node& value, const std::string& origin, const Recipes& recipes) const {
    Choice c;
    const Setting setting = setting_of(key, value, origin);
    if (key == "recipe") {
      c.settings = recipe(recipes, value);
    } else {
      c.settings.push_back(setting);
    }
    c.parts.push_back(name_part(key, setting.value));
    return c;
  }

  std::vector<Choice> listed_runs(const toml::table& root, const Recipes& recipes) const {
    std::vector<Choice> runs;
    const toml::node* node = root.get("runs");
    if (!node) return runs;
    const auto* array = node->as_array();
    if (!array || !array->is_array_of_tables() || array->empty()) {
      fail(where(*node), "runs must be a non-empty array of tables ([[runs]])");
    }
    for (const auto& entry : *array) {
      Choice run;
      std::string given_name;
      for (const auto& [key_pointer, value_pointer] : in_file_order(*entry.as_table())) {
        const toml::key& key = *key_pointer;
        const toml::node& value = *value_pointer;
        const std::string origin = where(key, value);
        if (key.str() == "name") {
          if (!value.is_string() || value.as_string()->get().empty()) fail(origin, "name must be a non-empty string");
          given_name = value.as_string()->get();
          continue;
        }
        if (value.is_table()) {  // [runs.quant] preset = "bf16": a part per key, "preset-bf16"
          for (Setting& s : flatten(*value.as_table(), source, std::string(key.str()))) {
            run.parts.push_back(name_part(s.key, s.value));
            run.settings.push_back(std::move(s));
          }
          continue;
        }
        Choice one = choice(std::string(key.str()), value, origin, recipes);
        for (Setting& s : one.settings) run.settings.push_back(std::move(s));
        run.parts.push_back(one.parts.front());
      }
      if (!given_name.empty()) run.parts = {name_part("recipe", given_name)};  // as written: its group is itself
      runs.push_back(std::move(run));
    }
    return runs;
  }

  std::vector<std::vector<Choice>> axes(const toml::table& root, const Recipes& recipes) const {
    std::vector<std::vector<Choice>> dimensions;
    const toml::node* node = root.get("axes");
    if (!node) return dimensions;
    const auto* table = node->as_table();
    if (!table) fail(where(*node), "axes must be a table: [axes] key = [values]");
    collect_axes(*table, "", recipes, dimensions);
    return dimensions;
  }

  // Dotted keys ("quant.act.format" = [...] or quant.act.format = [...]) name nested keys.
  void collect_axes(const toml::table& table, const std::string& prefix, const Recipes& recipes,
                    std::vector<std::vector<Choice>>& dimensions) const {
    for (const auto& [key_pointer, node_pointer] : in_file_order(table)) {
      const toml::key& key = *key_pointer;
      const toml::node& node = *node_pointer;
      const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
      if (const auto* nested = node.as_table()) {
        collect_axes(*nested, path, recipes, dimensions);
        continue;
      }
      const auto* values = node.as_array();
      if (!values || values->empty()) fail(where(key, node), "axes." + path + " must be a non-empty array of values");
      std::vector<Choice> axis;
      for (const auto& value : *values) axis.push_back(choice(path, value, where(value), recipes));
      dimensions.push_back(std::move(axis));
    }
  }

  double number(const toml::table& table, std::string_view key, double fallback, bool required) const {
    const toml::node* node = table.get(key);
    if (!node) {
      if (required) fail(where(table), "[search] needs " + std::string(key));
      return fallback;
    }
    if (node->is_integer()) return static_cast<double>(node->as_integer()->get());
    if (!node->is_floating_point()) fail(where(*node), "search." + std::string(key) + " must be a number");
    return node->as_floating_point()->get();
  }

  std::optional<SearchSpec> search(const toml::table& root) const {
    const toml::node* node = root.get("search");
    if (!node) return std::nullopt;
    const auto* table = node->as_table();
    if (!table) fail(where(*node), "search must be a table ([search])");
    for (auto&& [key, value] : *table) check_known(key, value, kSearchKeys, "[search]");
    SearchSpec spec;
    spec.origin = where(*table);
    const auto* kind = table->get("kind");
    if (!kind || !kind->is_string() || kind->as_string()->get() != "lr_threshold") {
      fail(kind ? where(*kind) : spec.origin, "search.kind must be \"lr_threshold\" (the only search kind)");
    }
    if (const auto* key = table->get("key")) {
      if (!key->is_string()) fail(where(*key), "search.key must be a config key name (a string)");
      spec.key = key->as_string()->get();
    }
    spec.low = number(*table, "low", 0, true);
    spec.high = number(*table, "high", 0, true);
    if (!(spec.low > 0) || !(spec.high > spec.low) || !std::isfinite(spec.high)) {
      fail(spec.origin, "search needs 0 < low < high, got low = " + io::toml_float(spec.low) +
                            ", high = " + io::toml_float(spec.high));
    }
    const double bisections = number(*table, "bisections", spec.bisections, false);
    if (bisections < 0 || bisections > 30 || bisections != std::floor(bisections)) {
      fail(where(*table->get("bisections")), "search.bisections must be an integer in [0, 30]");
    }
    spec.bisections = static_cast<int>(bisections);
    const double steps = number(*table, "steps", 0, true);
    if (steps < 1 || steps != std::floor(steps)) fail(where(*table->get("steps")), "search.steps must be an integer >= 1");
    spec.steps = static_cast<std::int64_t>(steps);
    spec.loss_multiple = number(*table, "loss_multiple", spec.loss_multiple, false);
    if (!(spec.loss_multiple > 1) || !std::isfinite(spec.loss_multiple)) {
      fail(where(*table->get("loss_multiple")), "search.loss_multiple must be a finite number > 1, got " +
                                                    io::toml_float(spec.loss_multiple));
    }
    return spec;
  }
};

// [criteria] (one) or [[criteria]] (several), each checked key by key.
struct CriteriaReader {
  const Reader& reader;

  std::vector<Criterion> read(const toml::table& root) const {
    const toml::node* node = root.get("criteria");
    if (!node) return {};
    if (const auto* table = node->as_table()) return {criterion(*table)};
    const auto* list = node->as_array();
    if (!list || !list->is_array_of_tables()) {
      reader.fail(reader.where(*node), "criteria must be a table ([criteria]) or an array of tables ([[criteria]])");
    }
    std::vector<Criterion> criteria;
    for (const auto& element : *list) criteria.push_back(criterion(*element.as_table()));
    return criteria;
  }

  Criterion criterion(const toml::table& table) const {
    for (auto&& [key, value] : table) reader.check_known(key, value, kCriterionKeys, "[criteria]");
    Criterion c;
    c.origin = reader.where(table);
    const toml::node* baseline = table.get("baseline");
    if (!baseline || !baseline->is_string()) {
      reader.fail(baseline ? reader.where(*baseline) : c.origin, "criteria.baseline must name a group (a string)");
    }
    c.baseline = baseline->as_string()->get();
    const toml::node* gap = table.get("max_gap_pct");
    if (!gap) reader.fail(c.origin, "[criteria] needs max_gap_pct");
    const std::optional<double> value = gap->value<double>();
    if (!value || !(*value > 0) || !std::isfinite(*value)) {
      reader.fail(reader.where(*gap), "criteria.max_gap_pct must be a finite number > 0 (a gap in percent)");
    }
    c.max_gap_pct = *value;
    c.min_seeds = integer(table, "min_seeds", c.min_seeds, 1);
    c.min_steps = integer(table, "min_steps", c.min_steps, 0);
    c.groups = group_names(table);
    return c;
  }

  // criteria.groups: the group names it judges, as a non-empty array of strings.
  std::vector<std::string> group_names(const toml::table& table) const {
    const toml::node* node = table.get("groups");
    if (!node) return {};
    const auto* list = node->as_array();
    if (!list || list->empty()) reader.fail(reader.where(*node), "criteria.groups must be a non-empty array of group names");
    std::vector<std::string> names;
    for (const auto& element : *list) {
      if (!element.is_string()) reader.fail(reader.where(element), "criteria.groups must be a non-empty array of group names");
      names.push_back(element.as_string()->get());
    }
    return names;
  }

  std::int64_t integer(const toml::table& table, std::string_view key, std::int64_t fallback, std::int64_t least) const {
    const toml::node* node = table.get(key);
    if (!node) return fallback;
    if (!node->is_integer() || node->as_integer()->get() < least) {
      reader.fail(reader.where(*node), "criteria." + std::string(key) + " must be an integer >= " + std::to_string(least));
    }
    return node->as_integer()->get();
  }
};

// A search bisects one key per run, so no dimension may set that key. A seed axis is allowed: each
// seed of a group gets its own search, and the report combines them (docs/experiments.md).
void check_search(const SweepSpec& spec) {
  for (const auto& dimension : spec.dimensions) {
    for (const Choice& choice : dimension) {
      for (const Setting& s : choice.settings) {
        if (s.key == spec.search->key) {
          throw SweepError(s.origin + ": " + s.key + " is searched by [search] (" + spec.search->origin +
                           "); it cannot also be set by a run or an axis");
        }
      }
    }
  }
}

}  // namespace

SweepSpec parse_sweep(std::string text, const fs::path& file) {
  const Reader reader{file.string(), file};
  toml::table root;
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    throw SweepError(origin_of(file.string(), e.source()) + ": TOML syntax error: " + std::string(e.description()));
  }
  for (auto&& [key, value] : root) reader.check_known(key, value, kTopKeys, "the sweep file");
  SweepSpec spec;
  spec.file = file;
  spec.text = std::move(text);
  spec.base = reader.base(root, spec.base_label);
  for (Setting& s : reader.common(root)) spec.base.push_back(std::move(s));
  const Recipes recipes = reader.recipes(root);
  if (auto runs = reader.listed_runs(root, recipes); !runs.empty()) spec.dimensions.push_back(std::move(runs));
  for (auto& axis : reader.axes(root, recipes)) spec.dimensions.push_back(std::move(axis));
  spec.search = reader.search(root);
  spec.criteria = CriteriaReader{reader}.read(root);
  if (spec.search) check_search(spec);
  return spec;
}

SweepSpec load_sweep(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw SweepError(file.string() + ": cannot read the sweep file");
  return parse_sweep(std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}, file);
}

}  // namespace altgrad::sweep
