#include "sweep/slurm_script.hpp"

#include <regex>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "io/run_directory.hpp"

namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;

// Exit status of `altgrad train` stopped by SIGTERM with a checkpoint (cli/commands.hpp).
constexpr int kExitInterrupted = 75;

bool matches(const std::string& text, const char* pattern) { return std::regex_match(text, std::regex(pattern)); }

void require(bool ok, const std::string& option, const std::string& value, const std::string& expected) {
  if (!ok) throw std::invalid_argument(option + " \"" + value + "\": " + expected);
}

// Paths go into #SBATCH lines, which sbatch splits at whitespace and where '%' is a pattern.
void require_plain_absolute_path(const fs::path& path, const std::string& what) {
  require(path.is_absolute(), what, path.string(), "must be an absolute path (tasks start in Slurm's directory)");
  require(matches(path.string(), "[A-Za-z0-9._/+,=@:-]+"), what, path.string(),
          "may hold only letters, digits and ._/+,=@:- (it is written unquoted into #SBATCH lines)");
}

std::string array_range(std::size_t task_count, int limit) {
  std::string range = "0-" + std::to_string(task_count - 1);
  if (limit > 0) range += "%" + std::to_string(limit);
  return range;
}

// The names the task body reads in a run directory, as shell variables (io/run_directory.hpp).
std::string run_directory_names() {
  namespace rd = io::run_directory;
  const auto json_pair = [](std::string_view key, std::string_view value) {
    return "'\"" + std::string(key) + "\":" + std::string(value) + "'";
  };
  std::ostringstream s;
  s << "# The names in a run directory.\n"
    << "runs_dir=" << io::sweep_directory::kRuns << "\n"
    << "config_file=" << rd::kConfig << "\n"
    << "metrics_file=" << rd::kMetrics << "\n"
    << "events_file=" << rd::kEvents << "\n"
    << "checkpoint_glob='" << rd::kCheckpoints << "/" << rd::kCheckpointPrefix << "*'\n"
    << "end_event=" << json_pair(rd::kEventKey, "\"" + std::string(rd::kEndEvent) + "\"") << "\n"
    << "interrupted_end=" << json_pair(rd::kInterruptedKey, "true") << "\n";
  return s.str();
}

// What every task does, after the #SBATCH header and the two variables naming the sweep and the
// binary. Kept as one readable block: the user may edit it.
constexpr const char* kTaskBody = R"BODY(
run=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" "$sweep_dir/slurm/tasks.txt")
if [[ -z "$run" ]]; then
  echo "altgrad sweep: no run for array task $SLURM_ARRAY_TASK_ID in $sweep_dir/slurm/tasks.txt" >&2
  exit 2
fi
run_dir=$sweep_dir/$runs_dir/$run

# Finished runs are never rerun: the last end event in the events log says "completed" or why the
# run stopped (divergence, a non-finite loss). Only an interrupted end continues.
last_end=$(grep "$end_event" "$run_dir/$events_file" 2>/dev/null | tail -n 1)
if [[ -n "$last_end" && "$last_end" != *"$interrupted_end"* ]]; then
  echo "altgrad sweep: run $run has finished, nothing to do: $last_end"
  exit 0
fi

export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}
if compgen -G "$run_dir/$checkpoint_glob" >/dev/null; then
  args=(--resume "$run_dir")
else
  # No checkpoint yet: start the run over. The logs of an attempt that died before its first
  # checkpoint describe steps the new attempt repeats, so they go.
  rm -f "$run_dir/$metrics_file" "$run_dir/$events_file" "$run_dir"/events.out.tfevents.*
  args=("$run_dir/$config_file" --out "$run_dir")
fi

# USR1 is Slurm's warning before the time limit (--signal=B:USR1@...): checkpoint, then requeue.
# TERM (scancel, scontrol requeue) also reaches altgrad directly; passing it on again is harmless.
requeue=0
pid=
trap 'requeue=1; [[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null' USR1
trap '[[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null' TERM
echo "altgrad sweep: task $SLURM_ARRAY_TASK_ID (job ${SLURM_JOB_ID:-?}, restart ${SLURM_RESTART_COUNT:-0}): run $run on $OMP_NUM_THREADS threads: altgrad train ${args[*]}"
"$altgrad" train "${args[@]}" &
pid=$!
# A trapped signal ends `wait` early; wait again until altgrad itself has exited.
while :; do
  wait "$pid"
  status=$?
  kill -0 "$pid" 2>/dev/null || break
done
if ((status == INTERRUPTED && requeue == 1)); then
  echo "altgrad sweep: run $run checkpointed before the time limit; requeueing task $SLURM_ARRAY_TASK_ID"
  scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
fi
exit "$status"
)BODY";

}  // namespace

fs::path slurm_dir(const fs::path& sweep_dir) { return sweep_dir / "slurm"; }
fs::path slurm_script_path(const fs::path& sweep_dir) { return slurm_dir(sweep_dir) / "sweep.sbatch"; }
fs::path slurm_tasks_path(const fs::path& sweep_dir) { return slurm_dir(sweep_dir) / "tasks.txt"; }

void validate(const SlurmOptions& o) {
  require(o.partition.empty() || matches(o.partition, "[A-Za-z0-9_.,-]+"), "--partition", o.partition,
          "expected a partition name (letters, digits, _.-, several separated by commas)");
  // Slurm's --time forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or UNLIMITED.
  require(o.time.empty() || matches(o.time, "(\\d+(:\\d{1,2}){0,2}|\\d+-\\d+(:\\d{1,2}){0,2}|UNLIMITED|INFINITE)"),
          "--time", o.time, "expected HH:MM:SS (or Slurm's M, M:S, D-H, D-H:M, D-H:M:S)");
  require(o.cpus_per_run >= 1, "--cpus-per-run", std::to_string(o.cpus_per_run), "must be at least 1");
  require(o.gpus_per_run >= 0, "GPUs per run", std::to_string(o.gpus_per_run), "must be 0 or more");
  require(o.mem.empty() || matches(o.mem, "\\d+[KMGT]?"), "--mem", o.mem, "expected a size such as 4000, 4000M or 4G");
  require(o.array_limit >= 0, "--array-limit", std::to_string(o.array_limit), "must be 0 (no limit) or more");
  require(o.signal_seconds >= 0 && o.signal_seconds <= 65535, "signal lead time", std::to_string(o.signal_seconds),
          "must be 0 to 65535 seconds (Slurm's range)");
  require(matches(o.job_name, "[A-Za-z0-9_.+=@:-]+"), "job name", o.job_name, "expected letters, digits and _.+=@:-");
  for (const std::string& arg : o.sbatch_args) {
    require(matches(arg, "-[^\\s]+"), "--sbatch-arg", arg,
            "expected one sbatch option with no whitespace, such as --account=abc or --qos=low");
  }
}

std::string slurm_task_list(const std::vector<std::string>& run_names) {
  std::string list;
  for (const std::string& name : run_names) {
    require(!name.empty() && name != "." && name != ".." && name.find_first_of("/\n\r") == std::string::npos,
            "run name", name, "cannot name a run directory");
    list += name + "\n";
  }
  return list;
}

std::string slurm_array_script(const fs::path& sweep_dir, const fs::path& altgrad, std::size_t task_count,
                               const SlurmOptions& o) {
  validate(o);
  require_plain_absolute_path(sweep_dir, "sweep directory");
  require_plain_absolute_path(altgrad, "altgrad binary");
  if (task_count == 0) throw std::invalid_argument("a Slurm job array needs at least one run; this sweep has none");
  const std::string dir = sweep_dir.lexically_normal().string();
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# AltGrad sweep " << dir << " as a Slurm job array: one task per run; task i runs the run\n"
    << "# named on line i+1 of " << dir << "/slurm/tasks.txt. Written by `altgrad sweep --launcher slurm`;\n"
    << "# edit it and resubmit by hand with: sbatch " << dir << "/slurm/sweep.sbatch\n"
    << "#SBATCH --job-name=" << o.job_name << "\n"
    << "#SBATCH --array=" << array_range(task_count, o.array_limit) << "\n"
    << "#SBATCH --cpus-per-task=" << o.cpus_per_run << "\n";
  if (o.gpus_per_run > 0) s << "#SBATCH --gres=gpu:" << o.gpus_per_run << "\n";
  if (!o.partition.empty()) s << "#SBATCH --partition=" << o.partition << "\n";
  if (!o.time.empty()) s << "#SBATCH --time=" << o.time << "\n";
  if (!o.mem.empty()) s << "#SBATCH --mem=" << o.mem << "\n";
  s << "#SBATCH --requeue\n"
    << "#SBATCH --signal=B:USR1@" << o.signal_seconds << "\n"
    << "#SBATCH --open-mode=append\n"
    << "#SBATCH --output=" << dir << "/slurm/%A_%a.out\n";
  for (const std::string& arg : o.sbatch_args) s << "#SBATCH " << arg << "\n";
  s << "\nset -uo pipefail\n"
    << "sweep_dir='" << dir << "'\n"
    << "altgrad='" << altgrad.lexically_normal().string() << "'\n"
    << "INTERRUPTED=" << kExitInterrupted << "  # altgrad train's exit status after a checkpoint on SIGTERM\n"
    << run_directory_names() << kTaskBody;
  return s.str();
}

}  // namespace altgrad::sweep
