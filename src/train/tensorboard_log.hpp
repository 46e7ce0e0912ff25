#pragma once
// The run's TensorBoard event file: each logged step's scalars in one event, its histograms after.
#include <cstdint>
#include <filesystem>
#include <memory>

#include "train/scalar_log.hpp"

namespace altgrad::diag {
class TensorBoardWriter;
}

namespace altgrad::train {

class TensorBoardLog {
 public:
  explicit TensorBoardLog(const std::filesystem::path& run_dir);
  ~TensorBoardLog();
  TensorBoardLog(const TensorBoardLog&) = delete;
  TensorBoardLog& operator=(const TensorBoardLog&) = delete;

  void write(std::int64_t step, const ScalarLog& values);
  void flush();

 private:
  std::unique_ptr<diag::TensorBoardWriter> writer_;
};

}  // namespace altgrad::train
