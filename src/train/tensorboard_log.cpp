#include "train/tensorboard_log.hpp"

#include <vector>

namespace altgrad::train {

void TensorBoardLog::write(std::int64_t step, const monitor::ScalarLog& values) {
  std::vector<io::TaggedScalar> scalars;
  scalars.reserve(values.scalars.size());
  for (const auto& [tag, value] : values.scalars) scalars.push_back({tag, value});
  writer_.scalars(step, scalars);
  for (const auto& [tag, histogram] : values.histograms) writer_.histogram(tag, step, histogram);
}

}  // namespace altgrad::train
