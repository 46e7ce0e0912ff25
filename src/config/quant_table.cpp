#include "config/quant_table.hpp"

#include <utility>

namespace altgrad::config {

QuantTable::QuantTable() {
  static const auto empty_table = std::make_shared<const toml::table>();  // shared: no allocation per config
  table_ = empty_table;
}

// Moving (not copying) keeps the source regions of every node in the subtree.
QuantTable::QuantTable(toml::table table) : table_(std::make_shared<const toml::table>(std::move(table))) {}

}  // namespace altgrad::config
