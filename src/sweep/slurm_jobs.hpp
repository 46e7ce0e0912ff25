#pragma once
// SWEEP_DIR/slurm/jobs.txt: every array job `altgrad sweep --launcher slurm` submitted for the
// sweep, oldest first, one line each: "JOB_ID SUBMITTED TASKS", e.g.
//   1234 2026-11-24T15:30:02Z 0-3
//   1240 2026-11-24T16:02:41Z 1,3
// TASKS are the array indices submitted (lines of slurm/tasks.txt, from 0). --status and --cancel
// read it to find the sweep's jobs; a resubmission appends a line.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace altgrad::sweep {

struct SlurmSubmission {
  std::string job_id;                // the array job id from sbatch
  std::string submitted;             // UTC, ISO 8601
  std::vector<std::int64_t> tasks;   // the array indices submitted, ascending
};

std::filesystem::path slurm_jobs_path(const std::filesystem::path& sweep_dir);  // SWEEP_DIR/slurm/jobs.txt

// The array expression of `tasks` (ascending): runs of consecutive indices as ranges, "0-3", "1,3,5-7".
std::string array_expression(const std::vector<std::int64_t>& tasks);

// The submissions recorded for SWEEP_DIR; empty when it has no jobs.txt. Throws SweepError naming
// the file and line of a malformed line.
std::vector<SlurmSubmission> read_slurm_jobs(const std::filesystem::path& sweep_dir);

// Appends `submission` to jobs.txt (rewritten atomically: a reader never sees half a line).
void record_slurm_job(const std::filesystem::path& sweep_dir, const SlurmSubmission& submission);

// Now, as SlurmSubmission::submitted writes it.
std::string utc_now_iso8601();

}  // namespace altgrad::sweep
