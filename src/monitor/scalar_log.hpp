#pragma once
// Named values of one logged step, gathered for the TensorBoard writer: scalars and histograms by
// tag. The scalars come from the step's metrics line itself (add_scalars_of), so that every metric
// is recorded once, under one name: its TensorBoard tag is its path in metrics.jsonl.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/tensorboard_histogram.hpp"

namespace altgrad::monitor {

struct ScalarLog {
  std::vector<std::pair<std::string, double>> scalars;
  std::vector<std::pair<std::string, io::TensorBoardHistogram>> histograms;

  void add(std::string tag, double value) { scalars.emplace_back(std::move(tag), value); }
};

// Every number of a metrics line but "step" as a scalar tagged by its path ("quant/h.0.attn.q/amax",
// "diag/geometry/<tensor>/update_underflow"), array elements by index, booleans as 0 and 1. A
// log2 histogram object (with "counts" and "lo") gives its other keys; its counts are written as
// a TensorBoard histogram instead.
void add_scalars_of(const nlohmann::json& metrics, ScalarLog& scalars);

}  // namespace altgrad::monitor
