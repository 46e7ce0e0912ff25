// Writes SWEEP_DIR/slurm/tasks.txt and SWEEP_DIR/slurm/sweep.sbatch for the given runs, as the
// sweep command's Slurm launcher will: the smoke test's stand-in for `altgrad sweep --launcher
// slurm` until that command exists.
//   write_slurm_script SWEEP_DIR ALTGRAD ARRAY_LIMIT RUN_NAME...
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "sweep/slurm_script.hpp"
#include "train/atomic_file.hpp"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s SWEEP_DIR ALTGRAD ARRAY_LIMIT RUN_NAME...\n", argv[0]);
    return 2;
  }
  try {
    const std::filesystem::path sweep_dir = std::filesystem::absolute(argv[1]);
    altgrad::sweep::SlurmOptions options;
    options.array_limit = std::stoi(argv[3]);
    options.time = "10:00";
    options.mem = "500M";
    const std::vector<std::string> runs(argv + 4, argv + argc);
    std::filesystem::create_directories(altgrad::sweep::slurm_dir(sweep_dir));
    const std::string tasks = altgrad::sweep::slurm_task_list(runs);
    const std::string script = altgrad::sweep::slurm_array_script(sweep_dir, std::filesystem::absolute(argv[2]), runs.size(), options);
    altgrad::train::write_file_atomically(altgrad::sweep::slurm_tasks_path(sweep_dir), [&](std::ostream& out) { out << tasks; });
    altgrad::train::write_file_atomically(altgrad::sweep::slurm_script_path(sweep_dir), [&](std::ostream& out) { out << script; });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_slurm_script: %s\n", e.what());
    return 2;
  }
  return 0;
}
