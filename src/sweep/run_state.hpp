#pragma once
// A run's state, read from its own directory only (never from index.json), so that it is right
// whoever ran the run and however it ended (docs/experiments.md, "Status"):
//   pending      no directory, or no metrics.jsonl
//   unfinished   metrics but no end event: running now, or interrupted (resumed on the next sweep)
//   completed    events.jsonl ends the run with reason "completed"
//   stopped      the run ended early: a non-finite loss or gradient, or the loss diverged
#include <cstdint>
#include <filesystem>
#include <string>

namespace altgrad::sweep {

enum class RunStatus { pending, unfinished, completed, stopped };

const char* status_name(RunStatus status);

struct RunState {
  RunStatus status = RunStatus::pending;
  std::int64_t step = 0;   // the last logged step
  double val_loss = 0;     // the last logged val_loss; NaN when none
  std::string stop_reason;  // the end event's reason; empty until the run ends
  bool has_checkpoint = false;

  bool finished() const { return status == RunStatus::completed || status == RunStatus::stopped; }
  // A stop that a threshold search counts as divergence (everything but "completed").
  bool diverged() const { return status == RunStatus::stopped; }
};

RunState read_run_state(const std::filesystem::path& run_dir);

}  // namespace altgrad::sweep
