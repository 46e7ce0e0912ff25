#include "sweep/slurm_launcher.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

#include "io/atomic_file.hpp"
#include "io/run_directory.hpp"
#include "sweep/run_state.hpp"
#include "sweep/runner.hpp"
#include "sweep/slurm_commands.hpp"
#include "sweep/sweep_error.hpp"
#include "sweep/index_writer.hpp"


namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The run names of slurm/tasks.txt: array task i runs line i+1.
std::vector<std::string> read_task_runs(const fs::path& sweep_dir) {
  std::vector<std::string> names;
  std::ifstream in(slurm_tasks_path(sweep_dir));
  for (std::string line; std::getline(in, line);) names.push_back(line);
  return names;
}

std::string shown_state(const SlurmTask& task) {
  if (task.reason.empty() || task.reason == "0:0") return task.state;  // sacct's exit code of a clean exit
  return task.state + " (" + task.reason + ")";
}

// The latest submission of each task: task index → its array job id.
std::map<std::int64_t, std::string> latest_job_of_each_task(const std::vector<SlurmSubmission>& jobs) {
  std::map<std::int64_t, std::string> latest;
  for (const SlurmSubmission& job : jobs) {
    for (const std::int64_t task : job.tasks) latest[task] = job.job_id;
  }
  return latest;
}

// The jobs some task was last submitted in, oldest first: the ones whose state matters.
std::vector<std::string> current_jobs(const std::vector<SlurmSubmission>& jobs) {
  std::set<std::string> current;
  for (const auto& [task, job] : latest_job_of_each_task(jobs)) current.insert(job);
  std::vector<std::string> ordered;
  for (const SlurmSubmission& job : jobs) {
    if (current.count(job.job_id) && std::find(ordered.begin(), ordered.end(), job.job_id) == ordered.end()) {
      ordered.push_back(job.job_id);
    }
  }
  return ordered;
}

// Tasks of the sweep's current jobs that Slurm may still run: "1234_5 (run b) RUNNING" each.
std::vector<std::string> active_tasks(const std::vector<SlurmSubmission>& jobs, const std::vector<std::string>& task_runs,
                                      const std::string& job_id, const SlurmTasks& tasks) {
  const auto latest = latest_job_of_each_task(jobs);
  std::vector<std::string> active;
  for (const auto& [index, task] : tasks) {
    const auto owner = latest.find(index);
    if (owner == latest.end() || owner->second != job_id || !slurm_task_active(task.state)) continue;
    const std::string run = index < static_cast<std::int64_t>(task_runs.size()) ? task_runs[index] : "?";
    active.push_back(task.job_id + " (run " + run + ") " + shown_state(task));
  }
  return active;
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

void refuse_search(const SweepSpec& spec) {
  if (!spec.search) return;
  throw SweepError(spec.file.string() +
                   ": a [search] is a threshold search, whose every probe is chosen from the outcome of the "
                   "one before; a job array is submitted up front and cannot wait for outcomes, so the Slurm "
                   "launcher does not run searches. Run the search with the local launcher (altgrad sweep " +
                   spec.file.string() + " --jobs N), on a cluster inside one allocation: sbatch --cpus-per-task=N "
                   "--wrap \"altgrad sweep " + spec.file.string() + " --jobs N\"");
}

// A resubmission while an earlier array still runs would start a second task on the same run.
void refuse_while_active(const fs::path& sweep_dir) {
  const std::vector<SlurmSubmission> jobs = read_slurm_jobs(sweep_dir);
  const std::vector<std::string> task_runs = read_task_runs(sweep_dir);
  std::vector<std::string> active;
  for (const std::string& job : current_jobs(jobs)) {
    SlurmTasks tasks;
    try {
      tasks = query_array(job);
    } catch (const std::runtime_error& e) {
      throw SweepError("cannot tell whether array job " + job + " (" + slurm_jobs_path(sweep_dir).string() +
                       ") still runs: " + e.what());
    }
    for (std::string& task : active_tasks(jobs, task_runs, job, tasks)) active.push_back(std::move(task));
  }
  if (active.empty()) return;
  throw SweepError("this sweep's earlier array job still has tasks Slurm may run: " + joined(active, ", ") +
                   "; wait for them (altgrad sweep --status " + sweep_dir.string() + ") or cancel them (altgrad sweep "
                   "--cancel " + sweep_dir.string() + "), then submit again");
}

// tasks.txt maps every recorded submission's indices to runs: it must not change under them.
void write_task_list(const fs::path& sweep_dir, const std::string& tasks) {
  const fs::path path = slurm_tasks_path(sweep_dir);
  if (fs::exists(path) && read_text(path) != tasks && !read_slurm_jobs(sweep_dir).empty()) {
    throw SweepError(path.string() + " lists other runs, in another order, than this sweep file expands to; "
                     "its recorded array jobs refer to those lines. Use another --out for this sweep");
  }
  io::write_file_atomically(path, [&](std::ostream& o) { o << tasks; });
}

// The tasks to submit, split into those that can start now and those whose source run is
// submitted with them.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> split_by_source(const std::vector<PlannedRun>& runs,
                                                                                 const std::vector<std::int64_t>& submit) {
  std::set<std::string> submitted;
  for (const std::int64_t i : submit) submitted.insert(runs[static_cast<std::size_t>(i)].name);
  std::vector<std::int64_t> now, after;
  for (const std::int64_t i : submit) {
    const PlannedRun& run = runs[static_cast<std::size_t>(i)];
    (submitted.count(run.source) ? after : now).push_back(i);
  }
  return {now, after};
}

}  // namespace

void check_launcher_flags(const std::string& launcher, const std::vector<std::string>& given) {
  if (launcher != "local" && launcher != "slurm") {
    throw std::invalid_argument("--launcher \"" + launcher + "\": expected local or slurm");
  }
  const std::vector<std::string>& foreign = launcher == "local" ? kSlurmOnlyFlags : kLocalOnlyFlags;
  for (const std::string& flag : given) {
    if (std::find(foreign.begin(), foreign.end(), flag) == foreign.end()) continue;
    if (launcher == "local") {
      throw std::invalid_argument(flag + " is a flag of the Slurm launcher: add --launcher slurm, or leave " + flag +
                                  " out to run on this machine");
    }
    throw std::invalid_argument(flag + " is a flag of the local launcher; under --launcher slurm each run is one "
                                "array task, and --array-limit K caps how many run at once");
  }
}

bool slurm_task_active(const std::string& state) {
  static const std::set<std::string> final_states = {"COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT",
                                                     "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
                                                     "OUT_OF_MEMORY", "REVOKED", "SPECIAL_EXIT"};
  return final_states.count(state) == 0;
}

void launch_on_slurm(const SweepSpec& spec, const std::vector<PlannedRun>& runs, const fs::path& sweep_dir,
                     const fs::path& altgrad, const SlurmOptions& options, std::ostream& out) {
  refuse_search(spec);
  validate(options);
  // One script serves every task: where any run computes on a GPU, each task asks for one.
  SlurmOptions task_options = options;
  const bool on_gpu = std::any_of(runs.begin(), runs.end(),
                                  [](const PlannedRun& run) { return run.config.device == config::Device::cuda; });
  if (on_gpu) task_options.gpus_per_run = std::max(task_options.gpus_per_run, 1);
  const std::string script = slurm_array_script(sweep_dir, altgrad, runs.size(), task_options);  // checks the paths
  std::vector<std::string> names;
  for (const PlannedRun& run : runs) names.push_back(run.name);
  const std::string tasks = slurm_task_list(names);
  refuse_while_active(sweep_dir);

  prepare_sweep_dir(spec, sweep_dir);
  std::vector<IndexedRun> indexed;
  for (const PlannedRun& run : runs) indexed.push_back({&run, std::nullopt});
  write_index(sweep_dir, index_json(spec.base_label, indexed, {}, spec.criteria));
  std::vector<std::int64_t> submit;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunState state = read_run_state(sweep_dir / io::sweep_directory::kRuns / runs[i].name);
    if (state.finished()) {
      out << "skip " << runs[i].name << ": already " << status_name(state.status) << "\n";
      continue;
    }
    if (state.status == RunStatus::unfinished && state.has_checkpoint) {
      out << "resume " << runs[i].name << " from its last checkpoint (logged up to step " << state.step << ")\n";
    } else {
      write_fresh_run_dir(sweep_dir, runs[i]);
    }
    submit.push_back(static_cast<std::int64_t>(i));
  }
  if (submit.empty()) {
    out << "nothing to submit: all " << runs.size() << " runs have finished (altgrad sweep --status "
        << sweep_dir.string() << ")\n";
    return;
  }

  fs::create_directories(slurm_dir(sweep_dir));
  write_task_list(sweep_dir, tasks);
  io::write_file_atomically(slurm_script_path(sweep_dir), [&](std::ostream& o) { o << script; });
  // Runs that warm-start from a run submitted here wait for it: a second array job, started by
  // Slurm once every task of the first has ended (afterany: a source that failed leaves its
  // dependants to fail with the trainer's "has not finished").
  const auto [first, second] = split_by_source(runs, submit);
  std::string job;
  for (const std::vector<std::int64_t>* wave : {&first, &second}) {
    if (wave->empty()) continue;
    std::vector<std::string> sbatch = {"--array=" + array_expression(*wave)};
    if (options.array_limit > 0) sbatch[0] += "%" + std::to_string(options.array_limit);
    if (!job.empty()) sbatch.push_back("--dependency=afterany:" + job);
    const std::string submitted = utc_now_iso8601();
    const std::string after = job;
    job = submit_array(slurm_script_path(sweep_dir), sbatch);
    record_slurm_job(sweep_dir, {job, submitted, *wave});
    out << "submitted array job " << job << ": " << wave->size() << " of " << runs.size() << " runs (tasks "
        << array_expression(*wave) << " of " << slurm_tasks_path(sweep_dir).string() << ")";
    if (options.array_limit > 0) out << ", at most " << options.array_limit << " at once";
    if (!after.empty()) out << ", after array job " << after << " has ended";
    out << "\n";
  }
  out << "follow it:  altgrad sweep --status " << sweep_dir.string() << "   (or squeue -j " << job << ")\n"
      << "task output: " << (slurm_dir(sweep_dir) / (job + "_<task>.out")).string() << "\n"
      << "cancel it:  altgrad sweep --cancel " << sweep_dir.string() << "\n";
}

SlurmColumns slurm_columns(const std::vector<std::string>& task_runs, const std::vector<SlurmSubmission>& jobs,
                           const std::map<std::string, SlurmTasks>& states) {
  SlurmColumns columns;
  for (const auto& [index, job] : latest_job_of_each_task(jobs)) {
    if (index >= static_cast<std::int64_t>(task_runs.size())) continue;
    SlurmCell& cell = columns[task_runs[index]];
    cell.job = job + "_" + std::to_string(index);
    const auto tasks = states.find(job);
    if (tasks == states.end()) continue;
    const auto task = tasks->second.find(index);
    if (task != tasks->second.end()) cell.state = shown_state(task->second);
  }
  return columns;
}

std::string sweep_status(const fs::path& sweep_dir, std::ostream& notes) {
  if (!fs::exists(slurm_jobs_path(sweep_dir))) return status_table(sweep_dir);
  const std::vector<SlurmSubmission> jobs = read_slurm_jobs(sweep_dir);
  std::map<std::string, SlurmTasks> states;
  for (const std::string& job : current_jobs(jobs)) {
    try {
      states[job] = query_array(job);
    } catch (const std::runtime_error& e) {
      notes << "Slurm states unknown (shown as -): " << e.what() << "\n";
      break;
    }
  }
  return status_table(sweep_dir, slurm_columns(read_task_runs(sweep_dir), jobs, states));
}

void cancel_sweep(const fs::path& sweep_dir, std::ostream& out) {
  const std::vector<SlurmSubmission> jobs = read_slurm_jobs(sweep_dir);
  if (jobs.empty()) {
    throw SweepError(slurm_jobs_path(sweep_dir).string() + ": no Slurm array job recorded for this sweep directory "
                     "(it was not submitted with --launcher slurm)");
  }
  const std::vector<std::string> task_runs = read_task_runs(sweep_dir);
  std::vector<std::string> to_cancel, cancelled_tasks;
  for (const std::string& job : current_jobs(jobs)) {
    const std::vector<std::string> active = active_tasks(jobs, task_runs, job, query_array(job));
    if (active.empty()) continue;
    to_cancel.push_back(job);
    cancelled_tasks.insert(cancelled_tasks.end(), active.begin(), active.end());
  }
  if (to_cancel.empty()) {
    out << "nothing to cancel: no task of array job(s) " << joined(current_jobs(jobs), ", ")
        << " is pending or running\n";
    return;
  }
  cancel_jobs(to_cancel);
  out << "cancelled array job(s) " << joined(to_cancel, ", ") << ":\n";
  for (const std::string& task : cancelled_tasks) out << "  " << task << "\n";
  out << "running tasks checkpoint on Slurm's SIGTERM; submit the sweep again (altgrad sweep SWEEP.toml "
         "--launcher slurm --out "
      << sweep_dir.string() << ") to continue its unfinished runs\n";
}

}  // namespace altgrad::sweep
