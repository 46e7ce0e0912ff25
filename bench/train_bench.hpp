#pragma once
// `altgrad bench train`: tokens/s of a training step of this engine against the PyTorch reference
// (Debian's python3-torch) on the same config and batch shape, measured in the same command, each
// at its best thread count, with peak memory.
#include <ostream>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace altgrad::bench {

struct TrainBenchOptions {
  config::TrainConfig config;  // model and batch shape (the default training config unless given)
  int steps = 10;             // timed steps per thread count (the fastest is kept)
  int rounds = 1;             // engine and PyTorch measured this many times in turn (the fastest is kept)
  std::string recipe;         // a preset: compare its step time with FP32's instead of with PyTorch
  int run_steps = 0;          // > 0: also train a real run this long and compare its rate with the step's
  int diagnostics_steps = 0;  // > 0: instead, real runs this long with every diagnostic on and off
};

int run_train_bench(const TrainBenchOptions& options, std::ostream& out);

}  // namespace altgrad::bench
