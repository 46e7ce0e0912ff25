#pragma once
// Reading Slurm's answers about a sweep's job arrays: the job id `sbatch --parsable` prints, and
// one state per array task from `squeue` (jobs the controller still holds) and `sacct` (the
// accounting database, where a cluster has one). Pure text in, values out: the commands are run
// by slurm_commands.hpp, so this parsing is tested on recorded output without a cluster.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace altgrad::sweep {

// One array task as Slurm reports it.
struct SlurmTask {
  std::string job_id;  // "1234_5": what scancel and scontrol take
  std::string state;   // Slurm's state name: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  std::string reason;  // squeue's reason (e.g. JobArrayTaskLimit) or sacct's exit code ("1:0"); may be empty
};

// Array task index → its latest state.
using SlurmTasks = std::map<std::int64_t, SlurmTask>;

// The job id from `sbatch --parsable` ("1234" or "1234;cluster"). Throws std::runtime_error
// quoting the output when it holds no job id.
std::string parse_sbatch_job_id(std::string_view output);

// Indices of an array task expression: "5", "[1-3,7]", "[0-9%2]" (the %limit is dropped).
// Throws std::runtime_error on anything else.
std::vector<std::int64_t> expand_array_indices(std::string_view expression);

// The format squeue is asked for: array job id, task id (or a pending range), state, reason.
inline constexpr const char* kSqueueFormat = "%F|%K|%T|%r";
// `squeue --noheader --array --states=all --format=kSqueueFormat --jobs=ID` output → the tasks of
// array job `array_job_id`; lines of other jobs are ignored.
SlurmTasks parse_squeue(std::string_view output, std::string_view array_job_id);

// The fields sacct is asked for, in order.
inline constexpr const char* kSacctFields = "JobID,State,ExitCode";
// `sacct --noheader --parsable2 --allocations --format=kSacctFields --jobs=ID` output → the tasks
// of `array_job_id` ("1234_[2-3]" lines, still pending, expand to each task). A requeued task
// appears once per attempt; the last line wins, as sacct lists attempts oldest first.
// "CANCELLED by 0" becomes CANCELLED.
SlurmTasks parse_sacct(std::string_view output, std::string_view array_job_id);

}  // namespace altgrad::sweep
