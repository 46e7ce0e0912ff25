#pragma once
// Two runs that must be the same run: every file of their checkpoints at the given steps, byte for
// byte, and every metrics line but its wall-clock rate.
#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "train/training_run.hpp"

namespace altgrad::train_test {

inline void expect_same_run(const fs::path& expected, const fs::path& actual,
                            std::initializer_list<const char*> checkpoints = {"step_4", "step_6"}) {
  std::size_t files = 0;
  for (const char* step : checkpoints) {
    for (const auto& entry : fs::directory_iterator(expected / "checkpoints" / step)) {
      const fs::path relative = fs::path("checkpoints") / step / entry.path().filename();
      EXPECT_EQ(bytes_of(actual / relative), bytes_of(entry.path())) << relative;
      ++files;
    }
  }
  EXPECT_GE(files, 2 * checkpoints.size());
  const std::vector<nlohmann::json> want = metrics_without_timing(expected), got = metrics_without_timing(actual);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "metrics line " << i;
}

}  // namespace altgrad::train_test
