#pragma once
// The [quant] table of a training config, kept exactly as written: the training config does not
// interpret it; the quantization recipe parser does, later, and reports its own errors.
//
// Held behind a shared pointer to a const table because copying a toml::node drops its source
// region (toml++ copies values, not positions), and the recipe parser needs file:line for its
// messages however often the config was copied.
#include <memory>
#include <toml++/toml.h>

namespace altgrad::config {

class QuantTable {
 public:
  QuantTable();  // an empty table: no quantization recipe
  explicit QuantTable(toml::table table);

  const toml::table& table() const { return *table_; }
  bool empty() const { return table_->empty(); }

  // Same keys and values (source positions are not compared).
  friend bool operator==(const QuantTable& a, const QuantTable& b) { return a.table() == b.table(); }

 private:
  std::shared_ptr<const toml::table> table_;
};

}  // namespace altgrad::config
