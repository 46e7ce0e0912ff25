// `altgrad sweep SWEEP.toml [--jobs N] [--out DIR]` and `altgrad sweep --status DIR`; the Slurm
// launcher (--launcher slurm, --cancel DIR) is in sweep_slurm.cpp.
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "cli/commands.hpp"
#include "cli/sweep_slurm.hpp"
#include "data/corpus.hpp"
#include "report/write_report.hpp"
#include "sweep/expansion.hpp"
#include "sweep/runner.hpp"
#include "sweep/status_table.hpp"
#include "sweep/sweep_spec.hpp"
#include "sweep/thread_share.hpp"

namespace altgrad::cli {
namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::string file;
  std::string out;
  std::string status;
  int jobs = 1;
  bool list = false;
  std::string cancel;
  SlurmFlags slurm;
};

// The cores this process may run on (a cgroup or taskset may allow fewer than the machine has).
int usable_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

fs::path this_executable() { return fs::read_symlink("/proc/self/exe"); }

// Rebuilds the sweep's report (report.html, summary.csv, report.md) so that it can be opened while
// the sweep runs. A report that cannot be written (echarts.min.js not installed, say) is reported
// once and never stops the runs.
class ReportRefresher {
 public:
  explicit ReportRefresher(fs::path sweep_dir) : sweep_dir_(std::move(sweep_dir)) {}

  // The path of report.html, or empty when it could not be written.
  fs::path refresh() {
    if (failed_) return {};
    try {
      return report::write_report(sweep_dir_).html;
    } catch (const std::exception& e) {
      failed_ = true;
      std::cout << "report not written: " << e.what() << " (the sweep goes on; altgrad report "
                << sweep_dir_.string() << " writes it later)\n";
      return {};
    }
  }

 private:
  fs::path sweep_dir_;
  bool failed_ = false;
};

// Each run reads its corpus as it starts: a missing one would fail every run, one after another.
// Checked before the first starts, once per corpus.
void require_corpora(const std::vector<sweep::PlannedRun>& runs) {
  std::set<fs::path> checked;
  for (const sweep::PlannedRun& run : runs) {
    const fs::path corpus = data::resolve_corpus_path(run.config.data, ALTGRAD_SOURCE_DIR);
    if (!checked.insert(corpus).second || fs::exists(corpus)) continue;
    const std::string setup = run.config.data.empty() ? " (scripts/setup_corpus.sh installs the default corpus)" : "";
    throw std::invalid_argument("run " + run.name + ": its corpus " + corpus.string() + " does not exist" + setup +
                                "; no run was started");
  }
}

void run(const SweepArgs& args) {
  if (!args.status.empty()) {
    if (!args.file.empty()) throw std::invalid_argument("--status DIR takes no sweep file");
    print_sweep_status(args.status);
    return;
  }
  if (!args.cancel.empty()) {
    if (!args.file.empty()) throw std::invalid_argument("--cancel DIR takes no sweep file");
    cancel_sweep(args.cancel);
    return;
  }
  if (args.file.empty()) throw std::invalid_argument("give a sweep file (altgrad sweep SWEEP.toml) or --status DIR");
  const sweep::SweepSpec spec = sweep::load_sweep(args.file);
  const std::vector<sweep::PlannedRun> runs = sweep::expand(spec);  // every config checked before any run starts
  if (args.list) {  // the runs and what each sets, checked, without starting any
    for (const sweep::PlannedRun& run : runs) {
      std::cout << run.name << "  " << sweep::settings_json(run.settings).dump() << '\n';
    }
    return;
  }
  const fs::path sweep_dir = args.out.empty() ? fs::path("sweeps") / fs::path(args.file).stem() : fs::path(args.out);
  if (args.slurm.slurm()) return launch_sweep_on_slurm(spec, runs, sweep_dir, args.slurm);
  require_corpora(runs);
  sweep::SweepOptions options;
  options.sweep_dir = sweep_dir;
  options.jobs = args.jobs;
  options.cores = usable_cores();
  options.trainer = {this_executable().string(), "train"};
  options.progress = &std::cout;
  auto report = std::make_shared<ReportRefresher>(options.sweep_dir);
  options.on_run_finished = [report](const sweep::PlannedRun&, const sweep::RunState&) { report->refresh(); };
  std::cout << "sweep " << options.sweep_dir.string() << ": " << (spec.search ? "threshold search over " : "")
            << runs.size() << (spec.search ? " searches" : " runs") << ", " << options.jobs << " at a time, "
            << sweep::threads_per_run(options.cores, options.jobs) << " thread(s) each\n"
            << std::flush;
  const sweep::SweepOutcome outcome = sweep::run_sweep(spec, runs, options);
  std::cout << "sweep done: " << outcome.completed << " completed, " << outcome.stopped << " stopped, " << outcome.failed
            << " failed (altgrad sweep --status " << options.sweep_dir.string() << ")\n";
  if (const fs::path html = report->refresh(); !html.empty()) std::cout << "report: " << html.string() << "\n";
  if (!outcome.all_completed) throw CommandFailed{1};
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Run many training runs from a sweep file, or show a sweep's status "
                                          "(docs/experiments.md)");
  auto args = std::make_shared<SweepArgs>();
  cmd->add_option("sweep_file", args->file, "Sweep file (TOML; see configs/ablation.toml)");
  cmd->add_option("--jobs,-j", args->jobs, "Runs at once; each gets max(1, cores / jobs) threads")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--out", args->out, "Sweep directory (default: sweeps/<sweep file name>)");
  cmd->add_option("--status", args->status, "Print the state of each run of this sweep directory");
  cmd->add_flag("--list", args->list, "Check the sweep file and print its runs and their settings; start nothing");
  add_slurm_flags(cmd, args->slurm, args->cancel);
  cmd->callback([args] {
    check_launcher_flags(args->slurm);
    run(*args);
  });
}

}  // namespace altgrad::cli
