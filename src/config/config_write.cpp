// Writing a config: every key of the schema in its fixed order, one per line with its description,
// then the [quant] table as read. Parsing the output gives an equal TrainConfig.
#include <algorithm>
#include <sstream>

#include "config/config.hpp"
#include "config/config_fields.hpp"
#include "io/atomic_file.hpp"

namespace altgrad::config {
namespace {

constexpr std::size_t kCommentColumn = 40;  // aligns the descriptions of most keys

void write_fields(std::ostream& out, const TrainConfig& config) {
  std::string_view section;
  for (const auto& field : schema::fields()) {
    if (field.section != section) {
      section = field.section;
      out << "\n# " << section << "\n";
    }
    std::string line = std::string(field.key) + " = " + schema::value_literal(field, config);
    line.resize(std::max(line.size() + 1, kCommentColumn), ' ');
    out << line << "# " << field.doc << "\n";
  }
}

// toml++ writes the subtree (it round-trips every TOML value type, including arrays of tables);
// wrapping it in a root table makes the headers come out as [quant] and [quant.*].
void write_quant(std::ostream& out, const QuantTable& quant) {
  out << "\n# quantization recipe, as given (read by the recipe parser)\n";
  if (quant.empty()) {
    out << "[quant]\n";
    return;
  }
  toml::table root;
  root.insert("quant", quant.table());
  out << root << "\n";
}

}  // namespace

std::string config_to_toml(const TrainConfig& config) {
  std::ostringstream out;
  out << "# AltGrad training config, resolved: every key, so this file alone gives the run's settings.\n";
  write_fields(out, config);
  write_quant(out, config.quant);
  return out.str();
}

void write_config(const std::filesystem::path& path, const TrainConfig& config) {
  const std::string text = config_to_toml(config);
  io::write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

}  // namespace altgrad::config
