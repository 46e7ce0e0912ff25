#pragma once
// The resume check every optimizer and recipe must pass: train K steps, checkpoint, resume to 2K;
// an uninterrupted 2K run must leave the same checkpoint bytes and log the same metrics.
#include <gtest/gtest.h>

#include <filesystem>

#include "train/training_run.hpp"

namespace altgrad::train_test {

inline void expect_bit_identical_resume(const config::TrainConfig& full, const std::filesystem::path& dir) {
  const train::TrainOutcome straight = run(full, dir / "straight");
  config::TrainConfig half = full;
  half.max_iters = full.max_iters / 2;  // the schedule (lr_decay_iters) is the full run's
  run(half, dir / "split");
  const train::TrainOutcome resumed = run(full, dir / "split", /*resume=*/true);
  ASSERT_EQ(resumed.steps, full.max_iters);
  for (const char* file : {"model.safetensors", "optimizer.safetensors", "state.json"}) {
    EXPECT_EQ(bytes_of(resumed.last_checkpoint / file), bytes_of(straight.last_checkpoint / file)) << file;
  }
  EXPECT_EQ(metrics_without_timing(dir / "split"), metrics_without_timing(dir / "straight"));
}

}  // namespace altgrad::train_test
