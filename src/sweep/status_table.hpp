#pragma once
// `altgrad sweep --status DIR`: one row per run of the sweep directory's index.json — run, state,
// step, val loss, stop reason — each read from the run's own directory (run_state.hpp). A sweep
// submitted to Slurm adds two columns: each run's array task ("1234_5") and its Slurm state.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace altgrad::sweep {

// A run's Slurm columns; "-" where the run was never submitted or Slurm no longer knows the task.
struct SlurmCell {
  std::string job = "-";    // ARRAYJOB_TASK
  std::string state = "-";  // Slurm's state, with its reason when it gives one: "PENDING (JobHeldUser)"
};
using SlurmColumns = std::map<std::string, SlurmCell>;  // run name → its cells

// The table as text; with `slurm`, the two Slurm columns (runs absent from it show "-"). Throws
// SweepError when DIR has no readable index.json.
std::string status_table(const std::filesystem::path& sweep_dir, const std::optional<SlurmColumns>& slurm = {});

}  // namespace altgrad::sweep
