#pragma once
// One config key set by a sweep: a dotted key ("learning_rate", "quant.act.format",
// "quant.override"), its value as a TOML literal and as JSON, and the line that set it.
#include <nlohmann/json.hpp>
#include <string>
#include <toml++/toml.h>
#include <vector>

namespace altgrad::sweep {

struct Setting {
  std::string key;      // dotted path; tables are flattened, arrays are one value
  std::string literal;  // TOML text of the value: 3e-4, "e4m3", [{ match = "h.*", format = "e1m6" }]
  nlohmann::json value;
  std::string origin;   // "sweep.toml:12"
};

using Settings = std::vector<Setting>;

// The entries of `table` in the order the file wrote them (toml++ iterates tables sorted by key).
std::vector<std::pair<const toml::key*, const toml::node*>> in_file_order(const toml::table& table);

// The settings of `table`, keys prefixed with `prefix` (plus a dot), in the order written; every
// nested table becomes dotted keys, every array (of values or tables) stays one value.
Settings flatten(const toml::table& table, std::string_view source, const std::string& prefix = "");

// A single value as a setting of `key`.
Setting setting_of(const std::string& key, const toml::node& value, std::string origin);

// "file:line" of a node, or of its key.
std::string origin_of(std::string_view source, const toml::source_region& region);

}  // namespace altgrad::sweep
