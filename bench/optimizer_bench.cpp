#include "optimizer_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>

#include "model/gpt.hpp"
#include "optim/make_optimizer.hpp"
#include "optim/memory_footprint.hpp"
#include "train/optimizer_assignment.hpp"
#include "train/quant_recipe.hpp"
#include "train/trainer.hpp"
#include "train/weight_grids.hpp"

namespace altgrad::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRounds = 5;

struct Contender {
  std::string name;
  std::unique_ptr<optim::Optimizer> optimizer;
  std::vector<float> params;
  double best = std::numeric_limits<double>::infinity();  // seconds per step
};

optim::OptimizerKind kind_named(const std::string& name) {
  const auto& names = optim::kOptimizerNames;
  const auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) throw train::ConfigError("--optimizer: no optimizer named \"" + name + "\"");
  return static_cast<optim::OptimizerKind>(found - names.begin());
}

}  // namespace

int run_optimizer_bench(const OptimizerBenchOptions& options, std::ostream& out) {
  train::TrainConfig config = options.config;
  const model::Gpt<float> model(train::gpt_config(config));
  const auto& layout = model.layout();
  const train::Recipe recipe = train::resolve_recipe(config);
  const train::WeightGrids grids(layout, model.matmuls(), recipe, config.grid_format);

  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> initial(layout.size()), grads(layout.size());
  for (float& x : initial) x = normal(rng);
  for (float& x : grads) x = normal(rng);

  std::vector<Contender> contenders;
  std::vector<std::string> names = {"adamw"};
  for (const auto& n : options.optimizers) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  for (const auto& n : names) {
    config.optimizer = kind_named(n);
    Contender c{n, optim::make_optimizer(train::optimizer_spec(config), layout.size(),
                                         train::parameter_ranges(layout, config)),
                initial};
    grids.update(*c.optimizer, nullptr, c.params);
    c.optimizer->step(c.params, grads, 1e-3f);  // warm: first-step work (Madam's bounds) and page faults
    contenders.push_back(std::move(c));
  }
  // Rounds alternate between the optimizers so that a slow spell of the machine hits all of them.
  for (int round = 0; round < kRounds; ++round) {
    for (auto& c : contenders) {
      const auto t0 = Clock::now();
      for (int s = 0; s < options.steps; ++s) {
        grids.update(*c.optimizer, nullptr, c.params);
        c.optimizer->step(c.params, grads, 1e-3f);
      }
      c.best = std::min(c.best, std::chrono::duration<double>(Clock::now() - t0).count() / options.steps);
    }
  }
  char line[200];
  std::snprintf(line, sizeof line,
                "optimizer step over %zu parameters (recipe %s), best of %d rounds of %d steps,\n"
                "and the bytes of FP32 weights + optimizer state (docs/optimizers.md, \"Memory\"):\n",
                layout.size(), recipe.preset.c_str(), kRounds, options.steps);
  out << line;
  const double adamw_bytes = static_cast<double>(optim::memory_footprint(*contenders.front().optimizer).total_bytes());
  for (const auto& c : contenders) {
    const optim::MemoryFootprint memory = optim::memory_footprint(*c.optimizer);
    std::snprintf(line, sizeof line, "  %-16s %9.3f ms   %5.2fx adamw   %12zu B   %5.2fx adamw\n", c.name.c_str(),
                  c.best * 1e3, c.best / contenders.front().best, memory.total_bytes(),
                  static_cast<double>(memory.total_bytes()) / adamw_bytes);
    out << line;
  }
  return 0;
}

}  // namespace altgrad::bench
