#pragma once
// `altgrad bench train --optimizer X`: the time of one optimizer step over the config's model
// parameters, for AdamW and each named optimizer, timed alternately in the same process and
// printed as a ratio to AdamW's (the target for gridwalk and madam: at most 1.5; docs/optimizers.md).
#include <ostream>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace altgrad::bench {

struct OptimizerBenchOptions {
  config::TrainConfig config;  // model size, recipe (the grids), grid_format and hyperparameters
  std::vector<std::string> optimizers;
  int steps = 10;  // timed steps per round; the fastest round is kept
};

// Throws config::ConfigError for an unknown optimizer name.
int run_optimizer_bench(const OptimizerBenchOptions& options, std::ostream& out);

}  // namespace altgrad::bench
