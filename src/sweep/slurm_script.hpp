#pragma once
// The sbatch script that runs a sweep as one Slurm job array: one array task per run, in the order
// of SWEEP_DIR/slurm/tasks.txt (task i runs the run named on line i+1). It is written for people to
// read, edit and resubmit by hand (`sbatch SWEEP_DIR/slurm/sweep.sbatch`), so everything a task
// does is in the script itself:
//   - a run whose events.jsonl ends in a finished end event (completed, or stopped for a reason of
//     its own such as divergence) is left alone: a finished run is never rerun;
//   - a run with a checkpoint continues with `altgrad train --resume RUN_DIR`, bit-identically;
//   - otherwise it starts from RUN_DIR/config.toml (written by the sweep before submission);
//   - OMP_NUM_THREADS is the task's SLURM_CPUS_PER_TASK;
//   - Slurm's warning before the time limit (--signal=B:USR1@SECONDS, to the batch shell) becomes
//     SIGTERM to altgrad, which checkpoints at the next step boundary and exits 75 (interrupted),
//     and the task then requeues itself; on scancel or `scontrol requeue` altgrad gets Slurm's
//     own SIGTERM and checkpoints the same way.
// Slurm output goes to SWEEP_DIR/slurm/<array job>_<task>.out, appended across requeues.
#include <filesystem>
#include <string>
#include <vector>

namespace altgrad::sweep {

struct SlurmOptions {
  std::string partition;                 // empty: the cluster's default partition
  std::string time;                      // Slurm's --time (HH:MM:SS, MM, D-HH...); empty: the partition's
  int cpus_per_run = 1;                  // --cpus-per-task, and altgrad's OpenMP threads
  int gpus_per_run = 0;                  // --gres=gpu:N; the launcher asks for one where a run has device = "cuda"
  std::string mem;                       // --mem per task (e.g. 4G); empty: the cluster's default
  int array_limit = 0;                   // %K: at most this many tasks at once; 0: no limit
  std::vector<std::string> sbatch_args;  // further options, one `#SBATCH ARG` line each
  int signal_seconds = 120;              // the warning's lead time before the time limit
  std::string job_name = "altgrad-sweep";
};

// Where the launcher's files live inside a sweep directory.
std::filesystem::path slurm_dir(const std::filesystem::path& sweep_dir);         // SWEEP_DIR/slurm
std::filesystem::path slurm_script_path(const std::filesystem::path& sweep_dir); // .../sweep.sbatch
std::filesystem::path slurm_tasks_path(const std::filesystem::path& sweep_dir);  // .../tasks.txt

// Throws std::invalid_argument naming the option and its value when Slurm would refuse it or it
// would not survive being written into the script (a newline, a malformed time or memory size).
void validate(const SlurmOptions& options);

// tasks.txt: the run names, one per line; line i+1 is array task i. Throws std::invalid_argument
// for a name that cannot be a run directory's name (empty, '/', a newline, "." or "..").
std::string slurm_task_list(const std::vector<std::string>& run_names);

// The script for `task_count` tasks. `sweep_dir` and `altgrad` must be absolute (tasks run in
// whatever directory Slurm starts them) and free of whitespace, quotes and '%' (they appear in
// #SBATCH lines, which are not shell-quoted); std::invalid_argument otherwise.
std::string slurm_array_script(const std::filesystem::path& sweep_dir, const std::filesystem::path& altgrad,
                               std::size_t task_count, const SlurmOptions& options);

}  // namespace altgrad::sweep
