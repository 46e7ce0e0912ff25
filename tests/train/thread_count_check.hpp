#pragma once
// The thread-count check every optimizer must pass: the same config run on one and on two OpenMP
// threads leaves the same checkpoint bytes and logs the same metrics (docs/determinism.md).
#include <gtest/gtest.h>
#include <omp.h>

#include <filesystem>

#include "train/training_run.hpp"

namespace altgrad::train {

inline void expect_same_bits_on_one_and_two_threads(const TrainConfig& config, const std::filesystem::path& dir) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const TrainOutcome one = run(config, dir / "one");
  omp_set_num_threads(2);
  const TrainOutcome two = run(config, dir / "two");
  omp_set_num_threads(saved);
  for (const char* file : {"model.safetensors", "optimizer.safetensors"}) {
    EXPECT_EQ(bytes_of(one.last_checkpoint / file), bytes_of(two.last_checkpoint / file)) << file;
  }
  EXPECT_EQ(metrics_without_timing(dir / "one"), metrics_without_timing(dir / "two"));
}

}  // namespace altgrad::train
