#pragma once
// Run names (docs/experiments.md, "Run names"): one part per choice a run makes, joined by dots in
// the order the sweep file lists them — listed run first, then the axes:
//   recipe axis or `recipe` key      the recipe's name                  e4m3-hybrid
//   a number                         a short label, then the value      seed1, lr3e-4, n_layer4
//   a string or boolean              the label, a dash, the value       optimizer-sgd, bias-true
// Labels: learning_rate → lr, every other key → its last dotted segment. Numbers are written
// shortest; below 0.01 or from 10000 up in scientific notation without '+' or leading exponent
// zeros (3e-4, 1e5). Characters other than letters, digits, '-', '_', '+' and '.' become '_'.
// A run's group is its name without its seed part.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace altgrad::sweep {

struct NamePart {
  std::string text;
  bool is_seed = false;
};

// The part for `key` set to `value` (a JSON scalar; arrays and tables are written compactly).
NamePart name_part(const std::string& key, const nlohmann::json& value);

// learning_rate → "lr"; any other key → its last dotted segment.
std::string key_label(const std::string& key);

// "3e-4", "0.5", "2", "1e5".
std::string number_text(double value);

// Parts joined by dots; "base" when there are none.
std::string join_name(const std::vector<NamePart>& parts);
// The same without the seed parts.
std::string join_group(const std::vector<NamePart>& parts);

}  // namespace altgrad::sweep
