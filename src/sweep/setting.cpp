#include "sweep/setting.hpp"

#include <algorithm>
#include <sstream>

#include "io/toml_literal.hpp"

namespace altgrad::sweep {
namespace {

std::string quoted_key(std::string_view key) { return io::toml_string(key); }

std::string literal_of(const toml::node& node);

std::string array_literal(const toml::array& array) {
  std::string text = "[";
  for (std::size_t i = 0; i < array.size(); ++i) text += (i ? ", " : "") + literal_of(*array.get(i));
  return text + "]";
}

// Inline tables, so that an array of tables fits on the one line the setting's origin maps to.
std::string table_literal(const toml::table& table) {
  std::string text = "{";
  bool first = true;
  for (auto&& [key, node] : table) {
    text += (first ? " " : ", ") + quoted_key(key.str()) + " = " + literal_of(node);
    first = false;
  }
  return text + (first ? "}" : " }");
}

std::string literal_of(const toml::node& node) {
  if (const auto* s = node.as_string()) return io::toml_string(s->get());
  if (const auto* f = node.as_floating_point()) return io::toml_float(f->get());
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  if (const auto* a = node.as_array()) return array_literal(*a);
  if (const auto* t = node.as_table()) return table_literal(*t);
  // Dates and times: no config key takes one, and the config parser rejects them by type.
  std::ostringstream text;
  node.visit([&](const auto& value) {
    if constexpr (toml::is_date<decltype(value)> || toml::is_time<decltype(value)> ||
                  toml::is_date_time<decltype(value)>) {
      text << value;
    }
  });
  return text.str();
}

nlohmann::json json_of(const toml::node& node) {
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* b = node.as_boolean()) return b->get();
  if (const auto* a = node.as_array()) {
    nlohmann::json items = nlohmann::json::array();
    for (const auto& item : *a) items.push_back(json_of(item));
    return items;
  }
  if (const auto* t = node.as_table()) {
    nlohmann::json object = nlohmann::json::object();
    for (auto&& [key, value] : *t) object[std::string(key.str())] = json_of(value);
    return object;
  }
  return literal_of(node);
}

}  // namespace

std::string origin_of(std::string_view source, const toml::source_region& region) {
  return std::string(source) + ":" + std::to_string(region.begin.line);
}

Setting setting_of(const std::string& key, const toml::node& value, std::string origin) {
  return {key, literal_of(value), json_of(value), std::move(origin)};
}

std::vector<std::pair<const toml::key*, const toml::node*>> in_file_order(const toml::table& table) {
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (auto&& [key, node] : table) entries.emplace_back(&key, &node);
  const auto position = [](const toml::key& key) { return std::pair(key.source().begin.line, key.source().begin.column); };
  std::stable_sort(entries.begin(), entries.end(),
                   [&](const auto& a, const auto& b) { return position(*a.first) < position(*b.first); });
  return entries;
}

Settings flatten(const toml::table& table, std::string_view source, const std::string& prefix) {
  Settings settings;
  for (const auto& [key_pointer, node_pointer] : in_file_order(table)) {
    const toml::key& key = *key_pointer;
    const toml::node& node = *node_pointer;
    const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* nested = node.as_table()) {
      for (Setting& s : flatten(*nested, source, path)) settings.push_back(std::move(s));
    } else {
      settings.push_back(setting_of(path, node, origin_of(source, key.source().begin.line ? key.source() : node.source())));
    }
  }
  return settings;
}

}  // namespace altgrad::sweep
