#pragma once
// `altgrad sweep --status DIR`: one row per run of the sweep directory's index.json — run, state,
// step, val loss, stop reason — each read from the run's own directory (run_state.hpp).
#include <filesystem>
#include <string>

namespace altgrad::sweep {

// The table as text. Throws SweepError when DIR has no readable index.json.
std::string status_table(const std::filesystem::path& sweep_dir);

}  // namespace altgrad::sweep
