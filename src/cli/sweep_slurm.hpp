#pragma once
// The Slurm side of `altgrad sweep`: --launcher and the Slurm flags, and what --launcher slurm,
// --status and --cancel do with them (sweep/slurm_launcher.hpp). Kept apart from sweep_command.cpp,
// which only dispatches here.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "sweep/expansion.hpp"
#include "sweep/slurm_script.hpp"
#include "sweep/sweep_spec.hpp"

namespace altgrad::cli {

struct SlurmFlags {
  std::string launcher = "local";
  sweep::SlurmOptions options;
  std::vector<std::string> given;  // the launcher-specific flags on the command line, filled by check()
  std::vector<CLI::Option*> registered;

  bool slurm() const { return launcher == "slurm"; }
};

// Registers --launcher, the Slurm flags and --cancel on `cmd`.
void add_slurm_flags(CLI::App* cmd, SlurmFlags& flags, std::string& cancel_dir);

// Throws std::invalid_argument (exit status 2) for a flag the chosen launcher does not take, naming it.
void check_launcher_flags(SlurmFlags& flags);

void launch_sweep_on_slurm(const sweep::SweepSpec& spec, const std::vector<sweep::PlannedRun>& runs,
                           const std::filesystem::path& sweep_dir, const SlurmFlags& flags);

void print_sweep_status(const std::filesystem::path& sweep_dir);
void cancel_sweep(const std::filesystem::path& sweep_dir);

}  // namespace altgrad::cli
