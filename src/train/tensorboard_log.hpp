#pragma once
// The run's TensorBoard event file: each logged step's scalars in one event, its histograms after.
#include <cstdint>
#include <filesystem>

#include "io/tensorboard_writer.hpp"
#include "monitor/scalar_log.hpp"

namespace altgrad::train {

class TensorBoardLog {
 public:
  explicit TensorBoardLog(const std::filesystem::path& run_dir) : writer_(run_dir) {}

  void write(std::int64_t step, const monitor::ScalarLog& values);
  void flush() { writer_.flush(); }

 private:
  io::TensorBoardWriter writer_;
};

}  // namespace altgrad::train
