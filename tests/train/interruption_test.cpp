// A run interrupted at a step boundary (as SIGTERM interrupts `altgrad train`) checkpoints that
// step, says so in events.jsonl, and a resumed run ends with the same bytes as one never stopped.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "support/scratch_dir.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

TEST(Interruption, CheckpointsTheStepAndResumesToTheSameBytes) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));  // checkpoints at 4 and 8
  const TrainOutcome straight = run(c, dir.path() / "straight");

  const TrainOutcome stopped = run_interrupted(c, dir.path() / "split", 5);
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.steps, 5);
  EXPECT_EQ(stopped.last_checkpoint, dir.path() / "split" / "checkpoints" / "step_5");
  EXPECT_EQ(stopped.stop_reason, "interrupted by a test after step 5; checkpoint step_5 written, continue with --resume");
  const auto events = json_lines(dir.path() / "split" / "events.jsonl");
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.back().at("event"), "end");
  EXPECT_EQ(events.back().at("interrupted"), true);
  EXPECT_EQ(events[events.size() - 2].at("event"), "stop");

  const TrainOutcome resumed = run(c, dir.path() / "split", /*resume=*/true);
  EXPECT_FALSE(resumed.interrupted);
  EXPECT_EQ(resumed.stop_reason, "completed");
  for (const char* file : {"model.safetensors", "optimizer.safetensors", "state.json"}) {
    EXPECT_EQ(bytes_of(resumed.last_checkpoint / file), bytes_of(straight.last_checkpoint / file)) << file;
  }
  EXPECT_EQ(bytes_of(dir.path() / "split/checkpoints/step_4/model.safetensors"),
            bytes_of(dir.path() / "straight/checkpoints/step_4/model.safetensors"));
  EXPECT_EQ(metrics_without_timing(dir.path() / "split"), metrics_without_timing(dir.path() / "straight"));
}

TEST(Interruption, OnACheckpointStepWritesNoSecondCheckpoint) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome stopped = run_interrupted(c, dir.path() / "run", 4);
  EXPECT_TRUE(stopped.interrupted);
  int checkpoint_events = 0;
  for (const auto& e : json_lines(dir.path() / "run" / "events.jsonl")) checkpoint_events += e.at("event") == "checkpoint";
  EXPECT_EQ(checkpoint_events, 1);
}

TEST(Interruption, AfterTheLastStepTheRunCompletes) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome outcome = run_interrupted(c, dir.path() / "run", static_cast<int>(c.max_iters));
  EXPECT_FALSE(outcome.interrupted);
  EXPECT_EQ(outcome.stop_reason, "completed");
  EXPECT_EQ(outcome.steps, c.max_iters);
}

}  // namespace
}  // namespace altgrad::train
