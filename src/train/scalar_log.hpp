#pragma once
// Named values of one logged step, gathered for the TensorBoard writer: scalars and histograms by
// tag.
#include <string>
#include <utility>
#include <vector>

#include "io/tensorboard_histogram.hpp"

namespace altgrad::train {

struct ScalarLog {
  std::vector<std::pair<std::string, double>> scalars;
  std::vector<std::pair<std::string, io::TensorBoardHistogram>> histograms;

  void add(std::string tag, double value) { scalars.emplace_back(std::move(tag), value); }
};

}  // namespace altgrad::train
