#pragma once
// Each subcommand of `altgrad` registers itself on the application; main() only dispatches.
#include <CLI/CLI.hpp>

namespace altgrad::cli {

// Exit status for bad input (unknown format, unparsable number, bad option value).
inline constexpr int kExitBadInput = 2;
// Exit status of a run stopped by SIGTERM after writing a checkpoint: resume it, it is not a failure.
// 75 is EX_TEMPFAIL of sysexits.h ("try again later").
inline constexpr int kExitInterrupted = 75;

// Thrown by a command that has already reported its error and wants `status` as the exit code.
struct CommandFailed {
  int status;
};

void add_formats_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_sample_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_report_command(CLI::App& app);

}  // namespace altgrad::cli
