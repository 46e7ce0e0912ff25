#pragma once
// Runs a sweep on this machine: each run an `altgrad train` process in its own run directory, up
// to `jobs` at once, each with an equal share of the cores (thread_share.hpp). Finished runs are
// skipped, interrupted ones resumed from their last checkpoint, so rerunning a sweep continues it.
// A run that fails or diverges never stops the others.
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "sweep/expansion.hpp"
#include "sweep/run_state.hpp"
#include "sweep/sweep_spec.hpp"

namespace altgrad::sweep {

struct SweepOptions {
  std::filesystem::path sweep_dir;
  int jobs = 1;
  int cores = 1;
  std::vector<std::string> trainer;  // the command that trains: {"/path/to/altgrad", "train"}
  std::ostream* progress = nullptr;  // one line per run started and finished
  // Called after each run this sweep ran has ended (completed, stopped or failed), e.g. to rebuild
  // a report mid-sweep. Not called for runs skipped as already finished.
  std::function<void(const PlannedRun&, const RunState&)> on_run_finished;
};

struct SweepOutcome {
  int runs = 0;        // runs and probes in the sweep
  int completed = 0;
  int stopped = 0;     // ended early (diverged or non-finite)
  int failed = 0;      // the process ended without ending its run
  bool all_completed = false;  // every run completed, every search ended with all probes run
};

// `runs` as expand(spec) gives them. Throws SweepError when SWEEP_DIR holds a different sweep.
SweepOutcome run_sweep(const SweepSpec& spec, const std::vector<PlannedRun>& runs, const SweepOptions& options);

// Creates SWEEP_DIR with sweep.toml (once; a different sweep file there is an error) and index.json.
void prepare_sweep_dir(const SweepSpec& spec, const std::filesystem::path& sweep_dir);

// A run with nothing to continue from starts over: SWEEP_DIR/runs/<name> emptied and given the
// run's config.toml (what `altgrad train` is started on, by this runner or a Slurm task).
void write_fresh_run_dir(const std::filesystem::path& sweep_dir, const PlannedRun& run);

}  // namespace altgrad::sweep
