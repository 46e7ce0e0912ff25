#include "device_train_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/trainer.hpp"

namespace altgrad::bench {
namespace {

namespace fs = std::filesystem;

struct DeviceRate {
  double tokens_per_s = 0;
  std::optional<double> peak_device_mib;
};

std::vector<nlohmann::json> lines_of(const fs::path& file) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// One recipe's run of `steps` steps: a metrics line each step, one evaluation batch at the end
// (after the last step's rate is taken), no diagnostic step.
DeviceRate recipe_rate(const config::TrainConfig& base, const std::string& recipe, int steps) {
  config::TrainConfig c = base;
  c.quant = config::parse_config("[quant]\npreset = \"" + recipe + "\"\n", "(bench train --device)").quant;
  c.max_iters = steps;
  c.lr_decay_iters = steps;
  c.warmup_iters = 0;
  c.log_interval = 1;
  c.eval_interval = steps;
  c.eval_iters = 1;
  c.diag_interval = steps + 1;
  c.checkpoint_interval = 0;
  const fs::path dir = fs::temp_directory_path() / ("altgrad-bench-device-" + std::to_string(::getpid()) + "-" + recipe);
  fs::remove_all(dir);
  train::TrainOptions options;
  options.run_dir = dir;
  options.repo_root = ALTGRAD_SOURCE_DIR;
  const train::TrainOutcome outcome = train::train(c, options);
  if (outcome.stop_reason != "completed") throw std::runtime_error("bench train: recipe " + recipe + " stopped: " + outcome.stop_reason);
  std::vector<double> rates;
  for (const nlohmann::json& line : lines_of(dir / "metrics.jsonl")) {
    if (line.at("step").get<int>() > 2) rates.push_back(line.at("tokens_per_s").get<double>());
  }
  DeviceRate rate;
  for (const nlohmann::json& event : lines_of(dir / "events.jsonl")) {
    if (event.value("event", "") == "end" && event.at("cost").contains("peak_device_bytes")) {
      rate.peak_device_mib = event.at("cost").at("peak_device_bytes").get<double>() / (1 << 20);
    }
  }
  fs::remove_all(dir);
  if (rates.empty()) throw std::runtime_error("bench train: --steps must be at least 3 (the first two are warm-up)");
  std::nth_element(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2), rates.end());
  rate.tokens_per_s = rates[rates.size() / 2];
  return rate;
}

}  // namespace

int run_device_train_bench(const DeviceTrainBenchOptions& options, std::ostream& out) {
  const config::TrainConfig& c = options.config;
  char line[256];
  std::snprintf(line, sizeof line,
                "device train-step benchmark (%s): %d layers, %d heads, %d channels, batch %d x %d tokens, median of "
                "steps 3-%d of a real run per recipe\n",
                config::kDeviceNames[static_cast<std::size_t>(c.device)].data(), c.n_layer, c.n_head, c.n_embd,
                c.batch_size, c.block_size, options.steps);
  out << line;
  std::vector<DeviceRate> rates;
  for (const std::string& recipe : options.recipes) rates.push_back(recipe_rate(c, recipe, options.steps));
  for (std::size_t i = 0; i < rates.size(); ++i) {
    std::snprintf(line, sizeof line, "%-12s %10.0f tokens/s  %5.2fx %s's", options.recipes[i].c_str(),
                  rates[i].tokens_per_s, rates[i].tokens_per_s / rates[0].tokens_per_s, options.recipes[0].c_str());
    out << line;
    if (rates[i].peak_device_mib) out << "  peak device memory " << static_cast<long>(*rates[i].peak_device_mib) << " MiB";
    out << '\n';
  }
  for (std::size_t i = 0; i < rates.size(); ++i) {
    nlohmann::json json = {{"recipe", options.recipes[i]}, {"tokens_per_s", rates[i].tokens_per_s}};
    json["peak_device_mib"] = rates[i].peak_device_mib ? nlohmann::json(*rates[i].peak_device_mib) : nlohmann::json();
    out << json.dump() << '\n';
  }
  return 0;
}

}  // namespace altgrad::bench
