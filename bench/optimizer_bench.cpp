#include "optimizer_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <random>

#include "recipe/recipe.hpp"
#include "model/gpt.hpp"
#include "optim/code_weights.hpp"
#include "optim/make_optimizer.hpp"
#include "optim/memory_footprint.hpp"
#include "precision/code_only_weights.hpp"
#include "precision/weight_grids.hpp"
#include "train/optimizer_assignment.hpp"
#include "train/trainer.hpp"

namespace altgrad::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRounds = 5;

// gridwalk with master_weights = false: its weights kept as codes (docs/optimizers.md).
constexpr const char* kGridwalkCodes = "gridwalk-codes";

struct Contender {
  std::string name;
  std::unique_ptr<optim::Optimizer> optimizer;
  std::vector<float> params;
  std::unique_ptr<optim::CodeWeights> codes;  // gridwalk-codes only
  std::optional<precision::WeightGrids> grids;     // gridwalk-codes only: its own, with the codes' scales
  double best = std::numeric_limits<double>::infinity();  // seconds per step
};

optim::OptimizerKind kind_named(const std::string& name) {
  if (name == kGridwalkCodes) return optim::OptimizerKind::gridwalk;
  const auto& names = optim::kOptimizerNames;
  const auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) throw config::ConfigError("--optimizer: no optimizer named \"" + name + "\"");
  return static_cast<optim::OptimizerKind>(found - names.begin());
}

// Keeps the contender's grid-walked weights as codes, exactly as the trainer does, on a copy of
// the grids (code-only tensors live on their codes' fixed scale).
void keep_as_codes(Contender& c, const precision::WeightGrids& grids, config::TrainConfig config,
                   const model::ParameterLayout& layout) {
  config.master_weights = false;
  c.grids.emplace(grids);
  c.codes =
      std::make_unique<optim::CodeWeights>(precision::encode_weights(config, *c.optimizer, layout, *c.grids, c.params));
  precision::bind_code_weights(*c.codes, c.params, *c.grids, nullptr, *c.optimizer);
}

}  // namespace

int run_optimizer_bench(const OptimizerBenchOptions& options, std::ostream& out) {
  config::TrainConfig config = options.config;
  const model::Gpt<float> model(config::gpt_config(config));
  const auto& layout = model.layout();
  const recipe::Recipe recipe = recipe::resolve_recipe(config);
  const precision::WeightGrids grids(layout, model.matmuls(), recipe, config.grid_format);

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
                initial, nullptr, std::nullopt};
    if (n == kGridwalkCodes) keep_as_codes(c, grids, config, layout);
    (c.grids ? *c.grids : grids).update(*c.optimizer, nullptr, c.params);
    c.optimizer->step(c.params, grads, 1e-3f);  // warm: first-step work (Madam's bounds) and page faults
    contenders.push_back(std::move(c));
  }
  // Rounds alternate between the optimizers so that a slow spell of the machine hits all of them.
  for (int round = 0; round < kRounds; ++round) {
    for (auto& c : contenders) {
      const auto t0 = Clock::now();
      for (int s = 0; s < options.steps; ++s) {
        (c.grids ? *c.grids : grids).update(*c.optimizer, nullptr, c.params);
        c.optimizer->step(c.params, grads, 1e-3f);
      }
      c.best = std::min(c.best, std::chrono::duration<double>(Clock::now() - t0).count() / options.steps);
    }
  }
  char line[200];
  std::snprintf(line, sizeof line,
                "optimizer step over %zu parameters (recipe %s), best of %d rounds of %d steps,\n"
                "and the bytes of weights + optimizer state (docs/optimizers.md, \"Memory\"):\n",
                layout.size(), recipe.preset.c_str(), kRounds, options.steps);
  out << line;
  const double adamw_bytes = static_cast<double>(optim::memory_footprint(*contenders.front().optimizer).total_bytes());
  for (const auto& c : contenders) {
    const optim::MemoryFootprint memory = optim::memory_footprint(*c.optimizer, c.codes.get());
    std::snprintf(line, sizeof line, "  %-16s %9.3f ms   %5.2fx adamw   %12zu B   %5.2fx adamw\n", c.name.c_str(),
                  c.best * 1e3, c.best / contenders.front().best, memory.total_bytes(),
                  static_cast<double>(memory.total_bytes()) / adamw_bytes);
    out << line;
  }
  for (const auto& c : contenders) {
    if (!c.codes) continue;
    const double fp32_bytes = 4.0 * static_cast<double>(c.codes->elements());
    std::snprintf(line, sizeof line, "%s keeps %zu weights as codes: %zu B of codes and scales, %.1f%% of their %.0f FP32 bytes\n",
                  c.name.c_str(), c.codes->elements(), c.codes->bytes(), 100.0 * static_cast<double>(c.codes->bytes()) / fp32_bytes,
                  fp32_bytes);
    out << line;
  }
  return 0;
}

}  // namespace altgrad::bench
