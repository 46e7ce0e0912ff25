#pragma once
// The emulated tensor-core GEMM (ops/cpu/emulated_gemm.hpp) against the float GEMM on a training
// step's shapes, measured in the same run.
#include <ostream>

#include "config/config.hpp"

namespace altgrad::bench {

struct GemmBenchOptions {
  config::TrainConfig config;     // the shapes: its model and batch
  std::string accumulate = "hopper";
  int repeats = 5;                // best of this many timed calls per GEMM
};

// Prints one line per GEMM shape (forward, dgrad, wgrad of each block Linear) and the step's total;
// returns 0.
int run_gemm_bench(const GemmBenchOptions& options, std::ostream& out);

}  // namespace altgrad::bench
