#include "sweep/runner.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

#include "io/atomic_file.hpp"
#include "io/run_directory.hpp"
#include "sweep/child_process.hpp"
#include "sweep/sweep_error.hpp"
#include "sweep/index_writer.hpp"
#include "sweep/thread_share.hpp"
#include "sweep/threshold_search.hpp"


namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class Runner {
 public:
  Runner(const SweepSpec& spec, const std::vector<PlannedRun>& runs, const SweepOptions& options)
      : spec_(spec), options_(options), threads_(threads_per_run(options.cores, options.jobs)) {
    if (spec.search) {
      for (const PlannedRun& group : runs) searches_.push_back(std::make_unique<ThresholdSearch>(spec, group));
    } else {
      for (const PlannedRun& run : runs) queue_.push_back(&run);
      fixed_.assign(queue_.begin(), queue_.end());
      outcome_.runs = static_cast<int>(runs.size());  // a search counts its probes as it makes them
    }
  }

  SweepOutcome run() {
    write_current_index();
    while (true) {
      while (static_cast<int>(running_.size()) < options_.jobs) {
        const Next next = take_next();
        if (!next.run) break;
        const RunState state = read_run_state(run_dir(*next.run));
        if (state.finished()) {
          say("skip " + next.run->name + ": already " + status_name(state.status));
          end(next, state, false);
          continue;
        }
        launch(next, state);
      }
      if (running_.empty()) {
        fail_orphans();
        break;
      }
      const ChildExit exit = wait_for_child();
      const auto found = running_.find(exit.pid);
      if (found == running_.end()) continue;
      const Running done = found->second;
      running_.erase(found);
      const RunState state = read_run_state(run_dir(*done.next.run));
      const double seconds = std::chrono::duration<double>(Clock::now() - done.started).count();
      report_end(*done.next.run, state, exit.status, seconds);
      end(done.next, state, true);
    }
    // A probe that diverges did its job; a run of a plain sweep that stops did not complete.
    outcome_.all_completed = outcome_.failed == 0 && (spec_.search || outcome_.completed == outcome_.runs);
    for (const auto& search : searches_) outcome_.all_completed = outcome_.all_completed && search->ok();
    return outcome_;
  }

 private:
  struct Next {
    const PlannedRun* run = nullptr;
    ThresholdSearch* search = nullptr;
  };
  struct Running {
    Next next;
    Clock::time_point started;
  };

  // The first queued run whose source, if any, has ended.
  Next take_next() {
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (!source_ended(**it)) continue;
      const PlannedRun* run = *it;
      queue_.erase(it);
      return {run, nullptr};
    }
    for (const auto& search : searches_) {
      if (const PlannedRun* probe = search->next()) {
        write_current_index();  // the probe's run is listed before it starts
        return {probe, search.get()};
      }
    }
    return {};
  }

  fs::path run_dir(const PlannedRun& run) const { return options_.sweep_dir / io::sweep_directory::kRuns / run.name; }

  // The source's process has exited (its files say the run ended before it does).
  bool source_ended(const PlannedRun& run) const {
    if (run.source.empty()) return true;
    for (const auto& [pid, running] : running_) {
      if (running.next.run->name == run.source) return false;
    }
    return read_run_state(options_.sweep_dir / io::sweep_directory::kRuns / run.source).finished();
  }

  // Runs left waiting when nothing runs any more: their source failed without ending its run.
  void fail_orphans() {
    for (const PlannedRun* run : queue_) {
      say("failed " + run->name + ": its source run " + run->source + " did not end (see " +
          (options_.sweep_dir / io::sweep_directory::kRuns / run->source / io::run_directory::kTrainLog).string() + ")");
      ++finished_;
      ++outcome_.failed;
    }
    queue_.clear();
  }

  void launch(const Next& next, const RunState& state) {
    const PlannedRun& run = *next.run;
    const fs::path dir = run_dir(run);
    std::vector<std::string> argv = options_.trainer;
    if (state.status == RunStatus::unfinished && state.has_checkpoint) {
      argv.insert(argv.end(), {"--resume", dir.string()});
      say("resume " + run.name + " from its last checkpoint (logged up to step " + std::to_string(state.step) + ")");
    } else {
      write_fresh_run_dir(options_.sweep_dir, run);
      argv.insert(argv.end(), {(dir / io::run_directory::kConfig).string(), "--out", dir.string()});
      say("start " + run.name);
    }
    const pid_t pid = start_child(argv, {{"OMP_NUM_THREADS", std::to_string(threads_)}}, dir / io::run_directory::kTrainLog);
    running_.emplace(pid, Running{next, Clock::now()});
  }

  void report_end(const PlannedRun& run, const RunState& state, int exit_status, double seconds) {
    char line[512];
    if (state.finished()) {
      std::snprintf(line, sizeof line, "%s %s: step %lld, val loss %.4f, %.1f s%s%s", status_name(state.status),
                    run.name.c_str(), static_cast<long long>(state.step), state.val_loss, seconds,
                    state.status == RunStatus::stopped ? ": " : "",
                    state.status == RunStatus::stopped ? state.stop_reason.c_str() : "");
    } else {
      std::snprintf(line, sizeof line, "failed %s: exit status %d without ending the run (see %s)", run.name.c_str(),
                    exit_status, (run_dir(run) / io::run_directory::kTrainLog).c_str());
    }
    say(line);
  }

  void end(const Next& next, const RunState& state, bool ran) {
    ++finished_;
    if (state.status == RunStatus::completed) ++outcome_.completed;
    else if (state.status == RunStatus::stopped) ++outcome_.stopped;
    else ++outcome_.failed;
    if (next.search) {
      next.search->finished(state);
      ++outcome_.runs;  // probes are counted as they are made
      write_current_index();
    }
    if (ran && options_.on_run_finished) options_.on_run_finished(*next.run, state);
  }

  void write_current_index() const {
    std::vector<IndexedRun> runs;
    std::vector<SearchRecord> records;
    for (const PlannedRun* run : fixed_) runs.push_back({run, std::nullopt});
    for (const auto& search : searches_) {
      for (const auto& probe : search->probes()) runs.push_back({probe.get(), search->record().group});
      records.push_back(search->record());
    }
    write_index(options_.sweep_dir, index_json(spec_.base_label, runs, records, spec_.criteria));
  }

  void say(const std::string& text) const {
    if (!options_.progress) return;
    *options_.progress << "[" << finished_ << "/" << outcome_.runs << "] " << text << '\n' << std::flush;
  }

  const SweepSpec& spec_;
  const SweepOptions& options_;
  const int threads_;
  std::deque<const PlannedRun*> queue_;
  std::vector<const PlannedRun*> fixed_;
  std::vector<std::unique_ptr<ThresholdSearch>> searches_;
  std::map<pid_t, Running> running_;
  SweepOutcome outcome_;
  int finished_ = 0;
};

}  // namespace

void prepare_sweep_dir(const SweepSpec& spec, const fs::path& sweep_dir) {
  fs::create_directories(sweep_dir / io::sweep_directory::kRuns);
  const fs::path copy = sweep_dir / "sweep.toml";
  if (fs::exists(copy)) {
    if (read_text(copy) != spec.text) {
      throw SweepError(copy.string() + " holds a different sweep file than " + spec.file.string() +
                       "; continue that sweep with its own file, or choose another --out");
    }
    return;
  }
  io::write_file_atomically(copy, [&](std::ostream& out) { out << spec.text; });
}

void write_fresh_run_dir(const fs::path& sweep_dir, const PlannedRun& run) {
  const fs::path dir = sweep_dir / io::sweep_directory::kRuns / run.name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  config::TrainConfig config = run.config;
  config.out_dir = "runs/" + run.name;
  if (!run.source.empty()) config.init_from = source_dir(sweep_dir, run).string();
  config::write_config(dir / io::run_directory::kConfig, config);
}

SweepOutcome run_sweep(const SweepSpec& spec, const std::vector<PlannedRun>& runs, const SweepOptions& options) {
  prepare_sweep_dir(spec, options.sweep_dir);
  return Runner(spec, runs, options).run();
}

}  // namespace altgrad::sweep
