// The local runner with a stand-in trainer (a shell script that records what it was given), so
// that scheduling, thread division, skipping and failure isolation are checked without training.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/text_file.hpp"
#include "sweep/runner.hpp"
#include "sweep/thread_share.hpp"
#include "sweep_test_support.hpp"

namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;
using test_support::ScratchDir;

TEST(ThreadShare, CoresAreDividedBetweenJobsAndNeverBelowOne) {
  EXPECT_EQ(threads_per_run(2, 1), 2);
  EXPECT_EQ(threads_per_run(2, 2), 1);
  EXPECT_EQ(threads_per_run(2, 3), 1);
  EXPECT_EQ(threads_per_run(16, 3), 5);
  EXPECT_EQ(threads_per_run(16, 4), 4);
  EXPECT_EQ(threads_per_run(1, 1), 1);
  for (int cores = 1; cores <= 64; ++cores) {
    for (int jobs = 1; jobs <= 64; ++jobs) {
      const int t = threads_per_run(cores, jobs);
      EXPECT_GE(t, 1);
      if (jobs <= cores) {
        EXPECT_LE(t * jobs, cores) << cores << " cores, " << jobs << " jobs";
      }
    }
  }
}

// Stands in for `altgrad train CONFIG --out DIR`: records its thread count, its arguments and the
// number of runs alive beside it, then ends its run as "completed" — or fails without ending it
// when its config sets n_embd = 24.
const char* const kFakeTrainer = R"(#!/bin/sh
dir="$3"
[ "$1" = "--resume" ] && dir="$2"
echo "$OMP_NUM_THREADS" > "$dir/threads"
echo "$@" > "$dir/args"
mkdir -p "$LIVE"; touch "$LIVE/$$"; ls "$LIVE" | wc -l > "$dir/alive"; sleep 0.5
rm "$LIVE/$$"
if grep -q '^n_embd = 24' "$dir/config.toml"; then echo "boom" >&2; exit 3; fi
echo '{"step": 4, "loss": 2.5, "val_loss": 2.25}' > "$dir/metrics.jsonl"
echo '{"event": "end", "step": 4, "reason": "completed"}' > "$dir/events.jsonl"
)";

struct FakeSweep {
  SweepOutcome outcome;
  std::vector<std::string> hooked;
  std::string progress;
};

FakeSweep run_fake(const ScratchDir& dir, const std::string& sweep, int jobs, int cores) {
  const fs::path trainer = dir.write("trainer.sh", kFakeTrainer);
  fs::permissions(trainer, fs::perms::owner_all);
  ::setenv("LIVE", (dir.path() / "live").c_str(), 1);
  dir.write("base.toml", sweep_test::kSmallBase);
  const SweepSpec spec = load_sweep(dir.write("sweep.toml", sweep));
  const auto runs = expand(spec);
  FakeSweep result;
  std::ostringstream progress;
  SweepOptions options;
  options.sweep_dir = dir.path() / "out";
  options.jobs = jobs;
  options.cores = cores;
  options.trainer = {"/bin/sh", trainer.string()};
  options.progress = &progress;
  options.on_run_finished = [&](const PlannedRun& run, const RunState&) { result.hooked.push_back(run.name); };
  result.outcome = run_sweep(spec, runs, options);
  result.progress = progress.str();
  return result;
}

TEST(SweepRunner, RunsInParallelWithThreadsDividedAndAFailureStopsNothing) {
  ScratchDir dir;
  const FakeSweep sweep = run_fake(dir, "base = \"base.toml\"\n[axes]\nn_embd = [16, 24, 32, 48]\n", 2, 6);
  EXPECT_EQ(sweep.outcome.runs, 4);
  EXPECT_EQ(sweep.outcome.completed, 3);
  EXPECT_EQ(sweep.outcome.failed, 1);
  EXPECT_FALSE(sweep.outcome.all_completed);
  EXPECT_EQ(sweep.hooked.size(), 4u);
  int most_alive = 0;
  for (const char* name : {"n_embd16", "n_embd24", "n_embd32", "n_embd48"}) {
    const fs::path run = dir.path() / "out" / "runs" / name;
    EXPECT_EQ(test_support::read_text(run / "threads"), "3\n") << name;  // 6 cores / 2 jobs
    EXPECT_EQ(test_support::read_text(run / "args"), (run / "config.toml").string() + " --out " + run.string() + "\n") << name;
    most_alive = std::max(most_alive, std::stoi(test_support::read_text(run / "alive")));
  }
  EXPECT_EQ(most_alive, 2);  // two at once, never more (each lives 0.5 s, so they overlap)
  EXPECT_NE(sweep.progress.find("failed n_embd24: exit status 3"), std::string::npos) << sweep.progress;
  EXPECT_NE(test_support::read_text(dir.path() / "out/runs/n_embd24/train.log").find("boom"), std::string::npos);
  const auto index = nlohmann::json::parse(test_support::read_text(dir.path() / "out/index.json"));
  EXPECT_EQ(index["format"], "altgrad-sweep/1");
  EXPECT_EQ(index["runs"].size(), 4u);
  EXPECT_EQ(index["runs"][1]["dir"], "runs/n_embd24");
  EXPECT_EQ(index["runs"][1]["settings"], nlohmann::json::parse(R"({"n_embd": 24})"));
}

TEST(SweepRunner, ARerunSkipsFinishedRunsAndRetriesTheFailedOne) {
  ScratchDir dir;
  const std::string sweep = "base = \"base.toml\"\n[axes]\nn_embd = [16, 24]\n";
  run_fake(dir, sweep, 1, 1);
  const fs::path finished = dir.path() / "out/runs/n_embd16/metrics.jsonl";
  const auto written = fs::last_write_time(finished);
  const FakeSweep again = run_fake(dir, sweep, 1, 1);
  EXPECT_EQ(again.hooked, (std::vector<std::string>{"n_embd24"}));  // only the one that ran
  EXPECT_EQ(fs::last_write_time(finished), written);
  EXPECT_NE(again.progress.find("skip n_embd16: already completed"), std::string::npos) << again.progress;
  EXPECT_EQ(test_support::read_text(dir.path() / "out/runs/n_embd24/threads"), "1\n");
}

TEST(SweepRunner, ADifferentSweepFileInTheSameDirectoryIsRefused) {
  ScratchDir dir;
  run_fake(dir, "base = \"base.toml\"\n[axes]\nn_embd = [16]\n", 1, 1);
  EXPECT_THROW(run_fake(dir, "base = \"base.toml\"\n[axes]\nn_embd = [32]\n", 1, 1), SweepError);
}

}  // namespace
}  // namespace altgrad::sweep
