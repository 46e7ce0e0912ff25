#include "sweep/status_table.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "sweep/run_state.hpp"
#include "sweep/sweep_error.hpp"

namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> run_names(const fs::path& sweep_dir) {
  const fs::path path = sweep_dir / "index.json";
  std::ifstream in(path);
  if (!in) throw SweepError(path.string() + ": no sweep index here (is " + sweep_dir.string() + " a sweep directory?)");
  const nlohmann::json index = nlohmann::json::parse(in, nullptr, false);
  if (!index.is_object() || !index.contains("runs") || !index["runs"].is_array()) {
    throw SweepError(path.string() + ": not a sweep index (no \"runs\" array)");
  }
  std::vector<std::string> names;
  for (const auto& run : index["runs"]) names.push_back(run.value("name", ""));
  return names;
}

std::string val_loss_text(double value) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

}  // namespace

std::string status_table(const fs::path& sweep_dir) {
  std::vector<std::array<std::string, 5>> rows = {{"run", "state", "step", "val loss", "stop reason"}};
  for (const std::string& name : run_names(sweep_dir)) {
    const RunState state = read_run_state(sweep_dir / "runs" / name);
    rows.push_back({name, status_name(state.status), std::to_string(state.step), val_loss_text(state.val_loss),
                    state.stop_reason.empty() ? "-" : state.stop_reason});
  }
  std::array<std::size_t, 5> width{};
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < 4; ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string text;
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < 4; ++c) {
      const bool right = c == 2 || c == 3;  // numbers
      const std::string pad(width[c] - row[c].size(), ' ');
      text += right ? pad + row[c] : row[c] + pad;
      text += "  ";
    }
    text += row[4] + "\n";
  }
  return text;
}

}  // namespace altgrad::sweep
