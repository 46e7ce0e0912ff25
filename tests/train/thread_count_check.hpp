#pragma once
// The thread-count check every optimizer must pass: the same config run on one and on two OpenMP
// threads leaves the same checkpoint bytes and logs the same metrics (docs/determinism.md).
#include <gtest/gtest.h>

#include <filesystem>

#include "support/thread_count.hpp"
#include "train/training_run.hpp"

namespace altgrad::train_test {

inline void expect_same_bits_on_one_and_two_threads(const config::TrainConfig& config, const std::filesystem::path& dir) {
  const train::TrainOutcome one = test_support::with_threads(1, [&] { return run(config, dir / "one"); });
  const train::TrainOutcome two = test_support::with_threads(2, [&] { return run(config, dir / "two"); });
  for (const char* file : {"model.safetensors", "optimizer.safetensors"}) {
    EXPECT_EQ(bytes_of(one.last_checkpoint / file), bytes_of(two.last_checkpoint / file)) << file;
  }
  EXPECT_EQ(metrics_without_timing(dir / "one"), metrics_without_timing(dir / "two"));
}

}  // namespace altgrad::train_test
