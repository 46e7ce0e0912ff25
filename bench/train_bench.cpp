#include "train_bench.hpp"

#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "format/philox.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "optim/adamw.hpp"
#include "train/trainer.hpp"

namespace altgrad::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The engine's training step, as the trainer runs it: forward, backward, clip, AdamW.
double engine_tokens_per_s(const train::TrainConfig& c, int steps, int threads) {
  omp_set_num_threads(threads);
  model::Gpt<float> gpt(train::gpt_config(c));
  gpt.initialize(c.seed);
  const auto B = static_cast<std::size_t>(c.batch_size), T = static_cast<std::size_t>(c.block_size);
  model::Activations<float> acts(gpt.config(), B, T);
  optim::AdamW adam(gpt.layout().size(), {0.9f, 0.99f, 1e-8f, 0.1f}, {{0, gpt.layout().size(), true}});
  std::vector<std::int32_t> x(B * T), y(B * T);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<std::int32_t>(format::philox_word(1, 0, i) & 255u);
    y[i] = static_cast<std::int32_t>(format::philox_word(1, 1, i) & 255u);
  }
  const auto step = [&] {
    gpt.zero_gradients();
    model::gpt_forward(gpt, acts, x, y);
    model::gpt_backward(gpt, acts);
    optim::clip_grad_norm(gpt.gradients(), 1.0);
    adam.step(gpt.parameters(), gpt.gradients(), 1e-3f);
  };
  for (int i = 0; i < 2; ++i) step();
  double best = 1e30;
  for (int i = 0; i < steps; ++i) {
    const auto t0 = Clock::now();
    step();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return static_cast<double>(B * T) / best;
}

nlohmann::json torch_runs(const train::TrainConfig& c, int steps, const std::vector<int>& threads) {
  const model::GptConfig g = train::gpt_config(c);
  std::string command = std::string("/usr/bin/python3 ") + ALTGRAD_SOURCE_DIR + "/bench/torch_train_step.py" +
                        " --n_layer " + std::to_string(g.n_layer) + " --n_head " + std::to_string(g.n_head) +
                        " --n_embd " + std::to_string(g.n_embd) + " --block_size " + std::to_string(g.block_size) +
                        " --mlp_hidden " + std::to_string(model::hidden_size(g)) + " --batch_size " +
                        std::to_string(c.batch_size) + " --steps " + std::to_string(steps) + " --bias " +
                        (g.bias ? "1" : "0") + " --norm " + std::string(model::to_string(g.norm)) + " --mlp " +
                        std::string(model::to_string(g.mlp)) + " --threads";
  for (int t : threads) command += " " + std::to_string(t);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe.get())) output += buffer;
  try {
    return nlohmann::json::parse(output);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error("the PyTorch reference failed (is python3-torch installed? scripts/setup.sh installs it): " +
                             command);
  }
}

double peak_rss_mib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace

int run_train_bench(const TrainBenchOptions& options, std::ostream& out) {
  const train::TrainConfig& c = options.config;
  const int max_threads = omp_get_max_threads();
  std::vector<int> threads = {1};
  if (max_threads > 1) threads.push_back(max_threads);

  char line[256];
  std::snprintf(line, sizeof line, "train-step benchmark: %d layers, %d heads, %d channels, batch %d x %d tokens, best of %d steps\n",
                c.n_layer, c.n_head, c.n_embd, c.batch_size, c.block_size, options.steps);
  out << line;
  double engine_best = 0.0;
  for (int t : threads) {
    const double tps = engine_tokens_per_s(c, options.steps, t);
    engine_best = std::max(engine_best, tps);
    std::snprintf(line, sizeof line, "%-8s threads %d  %10.0f tokens/s\n", "altgrad", t, tps);
    out << line;
  }
  omp_set_num_threads(max_threads);
  const double engine_peak = peak_rss_mib();
  const nlohmann::json torch = torch_runs(c, options.steps, threads);
  double torch_best = 0.0;
  for (const auto& run : torch["runs"]) {
    const double tps = run["tokens_per_s"].get<double>();
    torch_best = std::max(torch_best, tps);
    std::snprintf(line, sizeof line, "%-8s threads %d  %10.0f tokens/s\n", "pytorch", run["threads"].get<int>(), tps);
    out << line;
  }
  std::snprintf(line, sizeof line, "best: altgrad %.0f tokens/s, pytorch %s %.0f tokens/s, ratio %.2fx\n", engine_best,
                torch["torch"].get<std::string>().c_str(), torch_best, engine_best / torch_best);
  out << line;
  std::snprintf(line, sizeof line, "peak memory (RSS): altgrad %.0f MiB, pytorch %.0f MiB\n", engine_peak,
                torch["peak_rss_mib"].get<double>());
  out << line;
  return 0;
}

}  // namespace altgrad::bench
