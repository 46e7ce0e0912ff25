// A run's state from its directory alone: metrics and events as the trainer writes them,
// including an interrupted attempt followed by a resume, and a line cut short by a kill.
#include <gtest/gtest.h>

#include <cmath>

#include "support/scratch_dir.hpp"
#include "sweep/run_state.hpp"

namespace altgrad::sweep {
namespace {

using test_support::ScratchDir;

TEST(RunState, NoDirectoryOrNoMetricsIsPending) {
  ScratchDir dir;
  EXPECT_EQ(read_run_state(dir.path() / "absent").status, RunStatus::pending);
  dir.write("run/config.toml", "n_layer = 2\n");
  const RunState state = read_run_state(dir.path() / "run");
  EXPECT_EQ(state.status, RunStatus::pending);
  EXPECT_TRUE(std::isnan(state.val_loss));
}

TEST(RunState, MetricsWithoutAnEndAreUnfinishedAndACutLineIsSkipped) {
  ScratchDir dir;
  dir.write("run/metrics.jsonl", "{\"step\": 1, \"loss\": 5.5}\n{\"step\": 2, \"loss\": 5.4, \"val_loss\": 5.25}\n{\"step\": 3, \"lo");
  dir.write("run/events.jsonl", "{\"event\": \"start\", \"step\": 0}\n{\"event\": \"checkpoint\", \"step\": 2}\n");
  dir.write("run/checkpoints/step_2/state.json", "{}");
  const RunState state = read_run_state(dir.path() / "run");
  EXPECT_EQ(state.status, RunStatus::unfinished);
  EXPECT_EQ(state.step, 2);
  EXPECT_EQ(state.val_loss, 5.25);
  EXPECT_TRUE(state.has_checkpoint);
  EXPECT_EQ(state.stop_reason, "");
}

TEST(RunState, TheLastEndEventDecidesCompletedOrStopped) {
  ScratchDir dir;
  dir.write("done/metrics.jsonl", "{\"step\": 4, \"loss\": 2.0, \"val_loss\": 2.5}\n");
  dir.write("done/events.jsonl", "{\"event\": \"start\"}\n{\"event\": \"resume\", \"step\": 2}\n"
                                 "{\"event\": \"end\", \"step\": 4, \"reason\": \"completed\"}\n");
  RunState state = read_run_state(dir.path() / "done");
  EXPECT_EQ(state.status, RunStatus::completed);
  EXPECT_FALSE(state.diverged());
  EXPECT_FALSE(state.has_checkpoint);

  dir.write("wild/metrics.jsonl", "{\"step\": 2, \"loss\": 9.0}\n");
  dir.write("wild/events.jsonl",
            "{\"event\": \"start\"}\n{\"event\": \"stop\", \"step\": 3, \"reason\": \"loss diverged at step 3: x\"}\n"
            "{\"event\": \"end\", \"step\": 2, \"reason\": \"loss diverged at step 3: x\"}\n");
  state = read_run_state(dir.path() / "wild");
  EXPECT_EQ(state.status, RunStatus::stopped);
  EXPECT_TRUE(state.diverged());
  EXPECT_EQ(state.stop_reason, "loss diverged at step 3: x");
}

// SIGTERM (scancel, a requeue, the time-limit warning) ends a run with a checkpoint to resume from:
// an end event marked interrupted leaves the run unfinished, and the resume that follows it too.
TEST(RunState, AnInterruptedEndLeavesTheRunUnfinished) {
  ScratchDir dir;
  dir.write("run/metrics.jsonl", "{\"step\": 23, \"loss\": 4.0}\n");
  dir.write("run/events.jsonl",
            "{\"event\": \"start\"}\n"
            "{\"event\": \"end\", \"step\": 23, \"reason\": \"interrupted by SIGTERM after step 23\", \"interrupted\": true}\n");
  dir.write("run/checkpoints/step_23/state.json", "{}");
  RunState state = read_run_state(dir.path() / "run");
  EXPECT_EQ(state.status, RunStatus::unfinished);
  EXPECT_TRUE(state.has_checkpoint);
  EXPECT_EQ(state.stop_reason, "");

  dir.write("run/events.jsonl",
            "{\"event\": \"start\"}\n"
            "{\"event\": \"end\", \"step\": 23, \"reason\": \"interrupted by SIGTERM after step 23\", \"interrupted\": true}\n"
            "{\"event\": \"resume\", \"step\": 23}\n{\"event\": \"end\", \"step\": 40, \"reason\": \"completed\"}\n");
  state = read_run_state(dir.path() / "run");
  EXPECT_EQ(state.status, RunStatus::completed);
}

}  // namespace
}  // namespace altgrad::sweep
