#pragma once
// `altgrad bench train --device cuda`: the engine's training step on a GPU, recipe by recipe, as a
// real run takes it (docs/cuda.md, "Speed"). Each recipe trains a run of the config on the device
// in a temporary directory; a step's rate is its metrics line's tokens_per_s (forward, backward,
// quantization, clipping and the optimizer; no evaluation or checkpoint), and a recipe's is the
// median over its steps after the first two (cuBLASLt's choices and the host buffers settle
// there). Prints one line per recipe with its ratio to bf16's, then one JSON object per recipe
// for scripts (bench/gpu_speed_table.py): {"recipe", "tokens_per_s", "peak_device_mib"} (null where the
// device keeps no count).
#include <ostream>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace altgrad::bench {

struct DeviceTrainBenchOptions {
  config::TrainConfig config;                                    // its device, model and batch shape
  int steps = 12;                                                // steps of each recipe's run
  std::vector<std::string> recipes{"bf16", "fp32", "fp8-hybrid", "mx8"};  // presets; the first is the baseline
};

int run_device_train_bench(const DeviceTrainBenchOptions& options, std::ostream& out);

}  // namespace altgrad::bench
