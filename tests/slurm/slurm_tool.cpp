// The Slurm launcher's C++ pieces as a command, so that slurm_smoke_test.sh can drive them against
// a real cluster one at a time (a held script edited by the test, one task's state, one task
// cancelled); slurm_sweep_test.sh tests the same pieces through `altgrad sweep --launcher slurm`.
//   slurm_tool write SWEEP_DIR ALTGRAD ARRAY_LIMIT RUN_NAME...   tasks.txt and sweep.sbatch
//   slurm_tool submit SCRIPT                                     prints the array job id
//   slurm_tool status ARRAY_JOB_ID                               "INDEX JOB_ID STATE REASON" per task
//   slurm_tool cancel JOB_ID...
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "io/atomic_file.hpp"
#include "sweep/slurm_commands.hpp"
#include "sweep/slurm_script.hpp"

namespace {

namespace fs = std::filesystem;
using namespace altgrad::sweep;

int write(const std::vector<std::string>& args) {
  if (args.size() < 4) throw std::invalid_argument("write SWEEP_DIR ALTGRAD ARRAY_LIMIT RUN_NAME...");
  const fs::path sweep_dir = fs::absolute(args[0]);
  SlurmOptions options;
  options.array_limit = std::stoi(args[2]);
  options.time = "10:00";
  options.mem = "500M";
  const std::vector<std::string> runs(args.begin() + 3, args.end());
  fs::create_directories(slurm_dir(sweep_dir));
  const std::string tasks = slurm_task_list(runs);
  const std::string script = slurm_array_script(sweep_dir, fs::absolute(args[1]), runs.size(), options);
  altgrad::io::write_file_atomically(slurm_tasks_path(sweep_dir), [&](std::ostream& out) { out << tasks; });
  altgrad::io::write_file_atomically(slurm_script_path(sweep_dir), [&](std::ostream& out) { out << script; });
  return 0;
}

int status(const std::string& job) {
  for (const auto& [index, task] : query_array(job)) {
    std::printf("%lld %s %s %s\n", static_cast<long long>(index), task.job_id.c_str(), task.state.c_str(),
                task.reason.empty() ? "-" : task.reason.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() >= 1 && args[0] == "write") return write({args.begin() + 1, args.end()});
    if (args.size() == 2 && args[0] == "submit") {
      std::printf("%s\n", submit_array(args[1]).c_str());
      return 0;
    }
    if (args.size() == 2 && args[0] == "status") return status(args[1]);
    if (args.size() >= 2 && args[0] == "cancel") {
      cancel_jobs({args.begin() + 1, args.end()});
      return 0;
    }
    std::fprintf(stderr, "usage: slurm_tool write|submit|status|cancel ... (see tests/slurm/slurm_tool.cpp)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "slurm_tool: %s\n", e.what());
  }
  return 2;
}
