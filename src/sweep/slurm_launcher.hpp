#pragma once
// `altgrad sweep --launcher slurm`, `--status` and `--cancel` for a sweep run as a Slurm job array
// (docs/experiments.md, "Running a sweep on a Slurm cluster"). The sweep is expanded and its
// directory laid out exactly as the local launcher does (sweep.toml, index.json, runs/<name>/
// config.toml), then slurm/tasks.txt and slurm/sweep.sbatch are written and the runs not yet
// finished are submitted as one array job, recorded in slurm/jobs.txt.
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "sweep/expansion.hpp"
#include "sweep/slurm_jobs.hpp"
#include "sweep/slurm_query.hpp"
#include "sweep/slurm_script.hpp"
#include "sweep/status_table.hpp"
#include "sweep/sweep_spec.hpp"

namespace altgrad::sweep {

// Flags that only the Slurm launcher takes, and those only the local one takes.
inline const std::vector<std::string> kSlurmOnlyFlags = {"--partition", "--time", "--cpus-per-run", "--mem",
                                                         "--array-limit", "--sbatch-arg"};
inline const std::vector<std::string> kLocalOnlyFlags = {"--jobs"};

// Throws std::invalid_argument for a launcher other than "local" or "slurm", and for a flag in
// `given` (the flags on the command line) that the chosen launcher does not take, naming it.
void check_launcher_flags(const std::string& launcher, const std::vector<std::string>& given);

// Whether Slurm may still run or restart a task in this state (pending, running, requeued,
// completing, suspended, ...): anything but a final state (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...).
bool slurm_task_active(const std::string& state);

// Submits the runs of `runs` (as expand(spec) gives them) that have not finished. Refuses a
// threshold search (each probe depends on the last one's outcome, which an array submitted up front
// cannot wait for) and a sweep whose earlier array job still has active tasks. `sweep_dir` and
// `altgrad` must be absolute. Progress and the job id go to `out`. Throws SweepError or
// std::runtime_error (sbatch's message).
void launch_on_slurm(const SweepSpec& spec, const std::vector<PlannedRun>& runs, const std::filesystem::path& sweep_dir,
                     const std::filesystem::path& altgrad, const SlurmOptions& options, std::ostream& out);

// The Slurm columns of --status: for the run on line i+1 of tasks.txt (`task_runs`), the latest
// submission in `jobs` that included task i and that task's state in `states` (array job id →
// its tasks, as query_array gives them); "-" where Slurm no longer reports the task.
SlurmColumns slurm_columns(const std::vector<std::string>& task_runs, const std::vector<SlurmSubmission>& jobs,
                           const std::map<std::string, SlurmTasks>& states);

// `altgrad sweep --status DIR`: the status table, with the Slurm columns when DIR has
// slurm/jobs.txt. When Slurm cannot be asked (its commands absent, the controller down), says so
// once on `notes` and still returns the table, its Slurm states "-".
std::string sweep_status(const std::filesystem::path& sweep_dir, std::ostream& notes);

// `altgrad sweep --cancel DIR`: scancel of every recorded array job that still has active tasks;
// prints each cancelled task and its run on `out`. Throws SweepError when DIR has no recorded job.
void cancel_sweep(const std::filesystem::path& sweep_dir, std::ostream& out);

}  // namespace altgrad::sweep
