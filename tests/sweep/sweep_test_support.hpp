#pragma once
// Sweep files written into a scratch folder and expanded, for the sweep tests.
#include <string>
#include <vector>

#include "support/scratch_dir.hpp"
#include "sweep/expansion.hpp"
#include "sweep/sweep_error.hpp"
#include "sweep/sweep_spec.hpp"

namespace altgrad::sweep_test {

using test_support::ScratchDir;

// A small model, so that building a config's model in a test is instant.
inline constexpr const char* kSmallBase = R"(n_layer = 1
n_head = 2
n_embd = 16
block_size = 8
batch_size = 2
max_iters = 4
lr_decay_iters = 4
warmup_iters = 1
)";

inline std::vector<sweep::PlannedRun> expand_text(const ScratchDir& dir, const std::string& sweep,
                                                  const std::string& base = kSmallBase) {
  dir.write("base.toml", base);
  return sweep::expand(sweep::load_sweep(dir.write("sweep.toml", sweep)));
}

// The sweep::SweepError message of expanding `sweep`, or "" when it expands.
inline std::string expansion_error(const ScratchDir& dir, const std::string& sweep, const std::string& base = kSmallBase) {
  try {
    expand_text(dir, sweep, base);
  } catch (const sweep::SweepError& e) {
    return e.what();
  }
  return "";
}

inline std::vector<std::string> names_of(const std::vector<sweep::PlannedRun>& runs) {
  std::vector<std::string> names;
  for (const sweep::PlannedRun& run : runs) names.push_back(run.name);
  return names;
}

}  // namespace altgrad::sweep_test
