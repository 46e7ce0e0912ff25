#include "train/tensorboard_log.hpp"

#include <vector>

#include "diag/tensorboard_writer.hpp"

namespace altgrad::train {

TensorBoardLog::TensorBoardLog(const std::filesystem::path& run_dir)
    : writer_(std::make_unique<diag::TensorBoardWriter>(run_dir)) {}

TensorBoardLog::~TensorBoardLog() = default;

void TensorBoardLog::write(std::int64_t step, const ScalarLog& values) {
  std::vector<diag::TaggedScalar> scalars;
  scalars.reserve(values.scalars.size());
  for (const auto& [tag, value] : values.scalars) scalars.push_back({tag, value});
  writer_->scalars(step, scalars);
  for (const auto& [tag, histogram] : values.histograms) writer_->histogram(tag, step, histogram);
}

void TensorBoardLog::flush() { writer_->flush(); }

}  // namespace altgrad::train
