#pragma once
// Slurm through its commands (sbatch, squeue, sacct, scancel), never its library: the binary has no
// link-time Slurm dependency and works with whatever Slurm version the cluster's PATH provides.
#include <filesystem>
#include <string>
#include <vector>

#include "sweep/slurm_query.hpp"

namespace altgrad::sweep {

struct CommandOutput {
  int status = -1;  // the exit status; 127 when the program could not be started
  std::string out, err;
};

// Runs argv[0] (looked up in PATH) with no shell in between, and collects its output.
CommandOutput capture_command(const std::vector<std::string>& argv);

// `sbatch --parsable [OPTIONS...] SCRIPT`; the array job id. Options given here override the
// script's #SBATCH lines (e.g. --array=1,3 to submit only some tasks). Throws std::runtime_error
// with sbatch's message.
std::string submit_array(const std::filesystem::path& script, const std::vector<std::string>& options = {});

// The tasks of array job `array_job_id`: squeue's view of the jobs the controller holds, and for
// tasks it no longer holds, sacct's where accounting is configured (otherwise they are absent).
SlurmTasks query_array(const std::string& array_job_id);

// `scancel ID...` (an array job id cancels all its tasks, "1234_5" one). Throws std::runtime_error
// with scancel's message when it fails.
void cancel_jobs(const std::vector<std::string>& job_ids);

}  // namespace altgrad::sweep
