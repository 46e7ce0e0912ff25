#include "cli/sweep_slurm.hpp"

#include <iostream>

#include "sweep/slurm_launcher.hpp"

namespace altgrad::cli {

namespace fs = std::filesystem;

void add_slurm_flags(CLI::App* cmd, SlurmFlags& flags, std::string& cancel_dir) {
  sweep::SlurmOptions& o = flags.options;
  cmd->add_option("--launcher", flags.launcher, "local (default): runs on this machine; slurm: one Slurm array job "
                                                "(docs/experiments.md)");
  flags.registered = {
      cmd->add_option("--partition", o.partition, "Slurm: the partition (default: the cluster's)"),
      cmd->add_option("--time", o.time, "Slurm: each run's time limit, HH:MM:SS (default: the partition's)"),
      cmd->add_option("--cpus-per-run", o.cpus_per_run, "Slurm: CPUs per run, also its threads (default 1)"),
      cmd->add_option("--mem", o.mem, "Slurm: memory per run, e.g. 4G (default: the cluster's)"),
      cmd->add_option("--array-limit", o.array_limit, "Slurm: at most this many runs at once (default: no limit)"),
      cmd->add_option("--sbatch-arg", o.sbatch_args, "Slurm: one more #SBATCH option, e.g. --sbatch-arg=--qos=low "
                                                     "(repeatable)")
          ->allow_extra_args(false),
  };
  flags.registered.push_back(cmd->get_option("--jobs"));
  cmd->add_option("--cancel", cancel_dir, "Cancel the Slurm array job(s) of this sweep directory");
}

void check_launcher_flags(SlurmFlags& flags) {
  flags.given.clear();
  for (const CLI::Option* option : flags.registered) {
    if (option->count() > 0) flags.given.push_back(option->get_name());
  }
  sweep::check_launcher_flags(flags.launcher, flags.given);
}

void launch_sweep_on_slurm(const sweep::SweepSpec& spec, const std::vector<sweep::PlannedRun>& runs,
                           const fs::path& sweep_dir, const SlurmFlags& flags) {
  const fs::path dir = fs::absolute(sweep_dir).lexically_normal();
  std::cout << "sweep " << dir.string() << ": " << runs.size() << (runs.size() == 1 ? " run" : " runs") << " as a Slurm job array\n" << std::flush;
  sweep::launch_on_slurm(spec, runs, dir, fs::read_symlink("/proc/self/exe"), flags.options, std::cout);
}

void print_sweep_status(const fs::path& sweep_dir) { std::cout << sweep::sweep_status(sweep_dir, std::cerr); }

void cancel_sweep(const fs::path& sweep_dir) {
  sweep::cancel_sweep(fs::absolute(sweep_dir).lexically_normal(), std::cout);
}

}  // namespace altgrad::cli
