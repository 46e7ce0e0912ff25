#include "sweep/status_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "io/run_directory.hpp"
#include "sweep/run_state.hpp"
#include "sweep/sweep_error.hpp"


namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> run_names(const fs::path& sweep_dir) {
  const fs::path path = sweep_dir / io::sweep_directory::kIndex;
  std::ifstream in(path);
  if (!in) throw SweepError(path.string() + ": no sweep index here (is " + sweep_dir.string() + " a sweep directory?)");
  const nlohmann::json index = nlohmann::json::parse(in, nullptr, false);
  if (!index.is_object() || !index.contains(io::sweep_directory::kRunsKey) || !index[io::sweep_directory::kRunsKey].is_array()) {
    throw SweepError(path.string() + ": not a sweep index (no \"runs\" array)");
  }
  std::vector<std::string> names;
  for (const auto& run : index[io::sweep_directory::kRunsKey]) names.push_back(run.value("name", ""));
  return names;
}

std::string val_loss_text(double value) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

}  // namespace

std::string status_table(const fs::path& sweep_dir, const std::optional<SlurmColumns>& slurm) {
  using Row = std::vector<std::string>;
  std::vector<Row> rows = {{"run", "state", "step", "val loss"}};
  if (slurm) rows[0].insert(rows[0].end(), {"slurm job", "slurm state"});
  rows[0].push_back("stop reason");
  for (const std::string& name : run_names(sweep_dir)) {
    const RunState state = read_run_state(sweep_dir / io::sweep_directory::kRuns / name);
    Row row = {name, status_name(state.status), std::to_string(state.step), val_loss_text(state.val_loss)};
    if (slurm) {
      const auto cell = slurm->find(name);
      const SlurmCell shown = cell == slurm->end() ? SlurmCell{} : cell->second;
      row.insert(row.end(), {shown.job, shown.state});
    }
    row.push_back(state.stop_reason.empty() ? "-" : state.stop_reason);
    rows.push_back(std::move(row));
  }
  const std::size_t padded = rows[0].size() - 1;  // the stop reason, last, is not padded
  std::vector<std::size_t> width(padded, 0);
  for (const Row& row : rows) {
    for (std::size_t c = 0; c < padded; ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string text;
  for (const Row& row : rows) {
    for (std::size_t c = 0; c < padded; ++c) {
      const bool right = c == 2 || c == 3;  // numbers
      const std::string pad(width[c] - row[c].size(), ' ');
      text += right ? pad + row[c] : row[c] + pad;
      text += "  ";
    }
    text += row[padded] + "\n";
  }
  return text;
}

}  // namespace altgrad::sweep
