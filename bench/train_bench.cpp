#include "train_bench.hpp"

#include <cblas.h>
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "recipe/recipe.hpp"
#include "format/philox.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "ops/cpu/float_gemm.hpp"
#include "optim/adamw.hpp"
#include "precision/quant_hooks.hpp"
#include "train/trainer.hpp"

namespace altgrad::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The engine's training step, as the trainer runs it: forward, backward, clip, AdamW; with a
// recipe, through its quantization hooks, gathering the error sums behind rel_error as a logged
// step does or not, as every other step does (docs/quantization.md, "Which steps gather what").
class EngineStep {
 public:
  EngineStep(const config::TrainConfig& c, const std::string& recipe,
             quant::ErrorSums error_sums = quant::ErrorSums::skip)
      : error_sums_(error_sums),
        gpt_(config::gpt_config(c)),
        recipe_(recipe::preset_recipe(gpt_.matmuls(), recipe.empty() ? "fp32" : recipe, c.seed)),
        hooks_(recipe_.any_enabled() ? std::optional<precision::QuantHooks>(std::in_place, gpt_.matmuls(), recipe_)
                                     : std::nullopt),
        acts_(gpt_.config(), static_cast<std::size_t>(c.batch_size), static_cast<std::size_t>(c.block_size),
              hooks_ ? model::OperandCopies::allocated : model::OperandCopies::none),
        adam_(gpt_.layout().size(), {0.9f, 0.99f, 1e-8f, 0.1f}, {{0, gpt_.layout().size(), true}}),
        x_(acts_.B * acts_.T),
        y_(x_.size()) {
    gpt_.initialize(c.seed);
    for (std::size_t i = 0; i < x_.size(); ++i) {
      x_[i] = static_cast<std::int32_t>(format::philox_word(1, 0, i) & 255u);
      y_[i] = static_cast<std::int32_t>(format::philox_word(1, 1, i) & 255u);
    }
  }

  std::size_t tokens() const { return x_.size(); }

  // Values the last step quantized, over every point and both axes' copies.
  std::uint64_t quantized_values() const {
    std::uint64_t values = 0;
    if (!hooks_) return values;
    for (std::size_t i = 0; i < hooks_->size(); ++i) {
      if (const quant::PointQuantizer* point = hooks_->point(i)) {
        values += point->step_stats().values.count + point->column_stats().values.count;
      }
    }
    return values;
  }

  // Floating-point operations of one training step, by PaLM's count (Chowdhery et al. 2022,
  // appendix B): 6 per matmul weight per token (forward, input and weight gradients) plus
  // 12·n_layer·n_embd·block_size per token for attention's scores and weighted sums.
  double flops() const {
    double weights = 0.0;
    for (const model::MatmulPoint& m : gpt_.matmuls().all())
      weights += static_cast<double>(m.in_features) * static_cast<double>(m.out_features);
    const model::GptConfig& g = gpt_.config();
    const double attention = 12.0 * g.n_layer * g.n_embd * static_cast<double>(acts_.T);
    return (6.0 * weights + attention) * static_cast<double>(tokens());
  }

  // Seconds one step took.
  double step() {
    const auto t0 = Clock::now();
    model::MatmulHooks<float>* hooks = hooks_ ? &*hooks_ : nullptr;
    if (hooks_) hooks_->begin_step(step_, false, false, error_sums_);
    gpt_.zero_gradients();
    model::gpt_forward(gpt_, acts_, x_, y_, hooks);
    model::gpt_backward(gpt_, acts_, hooks);
    if (hooks_) hooks_->end_step();
    optim::clip_grad_norm(gpt_.gradients(), 1.0);
    adam_.step(gpt_.parameters(), gpt_.gradients(), 1e-3f);
    ++step_;
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

 private:
  quant::ErrorSums error_sums_;
  model::Gpt<float> gpt_;
  recipe::Recipe recipe_;
  std::optional<precision::QuantHooks> hooks_;
  model::Activations<float> acts_;
  optim::AdamW adam_;
  std::vector<std::int32_t> x_, y_;
  std::int64_t step_ = 0;
};

double engine_tokens_per_s(const config::TrainConfig& c, int steps, int threads) {
  omp_set_num_threads(threads);
  EngineStep engine(c, "");
  for (int i = 0; i < 2; ++i) engine.step();
  double best = 1e30;
  for (int i = 0; i < steps; ++i) best = std::min(best, engine.step());
  return static_cast<double>(engine.tokens()) / best;
}

// Seconds to copy `values` floats once, in pieces of an MLP activation's size (the largest
// operands), the best of several rounds: the least a pass that reads and writes each of them costs.
double copy_seconds(std::uint64_t values, std::size_t piece) {
  std::vector<float> from(piece, 1.0f), to(piece);
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = Clock::now();
    for (std::uint64_t done = 0; done < values; done += piece) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(piece, values - done));
      std::copy_n(from.data(), n, to.data());
      from[0] = to[n - 1];  // each copy depends on the last: none can be skipped
    }
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

// FP32 and the recipe's two kinds of step (an unlogged step without the error sums, a logged step
// with them) alternate step by step, so that all see the same machine; the fastest step of each is
// kept.
int run_recipe_bench(const TrainBenchOptions& options, std::ostream& out) {
  EngineStep fp32(options.config, ""), quantized(options.config, options.recipe, quant::ErrorSums::skip),
      logged(options.config, options.recipe, quant::ErrorSums::gather);
  for (int i = 0; i < 2; ++i) {
    fp32.step();
    quantized.step();
    logged.step();
  }
  double best_fp32 = 1e30, best_quantized = 1e30, best_logged = 1e30;
  for (int i = 0; i < options.steps; ++i) {
    best_fp32 = std::min(best_fp32, fp32.step());
    best_quantized = std::min(best_quantized, quantized.step());
    best_logged = std::min(best_logged, logged.step());
  }
  char line[256];
  const auto rate = [&](const std::string& name, double seconds) {
    std::snprintf(line, sizeof line, "%-12s %8.1f ms/step  %10.0f tokens/s\n", name.c_str(), 1e3 * seconds,
                  static_cast<double>(fp32.tokens()) / seconds);
    out << line;
  };
  rate("fp32", best_fp32);
  rate(options.recipe, best_quantized);
  rate(options.recipe + "+sums", best_logged);
  // docs/speed.md's targets: block scaling (mx8) may cost more than per-tensor scaling.
  const int target_pct = options.recipe == "mx8" ? 15 : 5;
  std::snprintf(line, sizeof line, "overhead of %s over fp32: %+.1f%% (target <= %d%%, a step without the error sums)\n",
                options.recipe.c_str(), 100.0 * (best_quantized / best_fp32 - 1.0), target_pct);
  out << line;
  std::snprintf(line, sizeof line, "overhead of %s over fp32 on a logged step (with the error sums): %+.1f%%\n",
                options.recipe.c_str(), 100.0 * (best_logged / best_fp32 - 1.0));
  out << line;
  // What one pass over the quantized values costs at the least, beside what the recipe costs.
  const std::uint64_t values = quantized.quantized_values();
  if (values == 0) return 0;
  const model::GptConfig g = config::gpt_config(options.config);
  const std::size_t piece = quantized.tokens() * static_cast<std::size_t>(model::hidden_size(g));
  const double copy = copy_seconds(values, piece);
  std::snprintf(line, sizeof line,
                "values quantized per step: %llu; one copy of them (memcpy, in pieces of an MLP activation) %.2f ms "
                "= %.1f%% of the fp32 step; the overhead is %.1f such copies\n",
                static_cast<unsigned long long>(values), 1e3 * copy,
                100.0 * copy / best_fp32, (best_quantized - best_fp32) / copy);
  out << line;
  return 0;
}

nlohmann::json torch_runs(const config::TrainConfig& c, int steps, const std::vector<int>& threads) {
  const model::GptConfig g = config::gpt_config(c);
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

// One 1024³ product by `multiply` at this thread count: its best rate over several calls, GFLOP/s.
template <typename Multiply>
double square_gflops(int threads, Multiply&& multiply) {
  constexpr int n = 1024;
  omp_set_num_threads(threads);
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(format::philox_word(2, 0, i) & 1023u) / 1024.0f;
    b[i] = static_cast<float>(format::philox_word(2, 1, i) & 1023u) / 1024.0f;
  }
  double best = 1e30;
  for (int i = 0; i < 8; ++i) {
    const auto t0 = Clock::now();
    multiply(n, a.data(), b.data(), c.data());
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return 2.0 * n * n * n / best / 1e9;
}

// The machine's own SGEMM rate, the ceiling of a step's rate: OpenBLAS alone (its own threading).
double sgemm_gflops(int threads) {
  return square_gflops(threads, [](int n, const float* a, const float* b, float* c) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  });
}

// The same product by AltGrad's own float GEMM, the kernel the step runs.
double own_gemm_gflops(int threads) {
  return square_gflops(threads, [](int n, const float* a, const float* b, float* c) {
    ops::cpu::float_gemm(false, true, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  });
}

// A real run of `c` for `steps` steps in a temporary directory: its tokens per second, wall clock.
double real_run_tokens_per_s(const config::TrainConfig& c, int steps) {
  config::TrainConfig run = c;
  run.max_iters = steps;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("altgrad-bench-run-" + std::to_string(::getpid()));
  train::TrainOptions options;
  options.run_dir = dir;
  options.repo_root = ALTGRAD_SOURCE_DIR;
  const auto t0 = Clock::now();
  train::train(run, options);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::filesystem::remove_all(dir);
  return static_cast<double>(steps) * run.batch_size * run.block_size * run.gradient_accumulation_steps / seconds;
}

// The cost of the diagnostics (docs/quantization.md): real runs of `steps` steps with the config's
// diagnostics at its intervals, against the same runs with them off (no diagnostic steps, no value
// profiles, one metrics line); evaluations and checkpoints alike. Alternated, best of two each, so
// that a slow spell of the machine hits both.
void compare_diagnostics(const config::TrainConfig& c, int steps, std::ostream& out) {
  config::TrainConfig off = c;
  off.diag_interval = steps + 1;
  off.profile_points = false;
  off.hessian_interval = 0;
  off.log_interval = steps;
  double on_tps = 0, off_tps = 0;
  for (int round = 0; round < 2; ++round) {
    on_tps = std::max(on_tps, real_run_tokens_per_s(c, steps));
    off_tps = std::max(off_tps, real_run_tokens_per_s(off, steps));
  }
  char line[320];
  std::snprintf(line, sizeof line,
                "diagnostics over %d steps (diag_interval %lld, log_interval %lld, value profiles %s), %d threads: "
                "on %.0f tokens/s, off %.0f tokens/s; they cost %.1f%% (target <= 10%%)\n",
                steps, static_cast<long long>(c.diag_interval), static_cast<long long>(c.log_interval),
                c.profile_points ? "on" : "off", omp_get_max_threads(), on_tps, off_tps, 100.0 * (1.0 - on_tps / off_tps));
  out << line;
}

// The step's rate: the median of 20 steps.
double median_step_tokens_per_s(EngineStep& engine) {
  std::vector<double> times(20);
  for (double& t : times) t = engine.step();
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return static_cast<double>(engine.tokens()) / times[times.size() / 2];
}

// The run as fast as its step: a real run of the config (its diagnostics, evaluations and
// checkpoints, in a temporary directory) for `steps` steps against the step alone (its median),
// at this process's thread count. Alternated, best of two each, so that a slow spell of the
// machine hits both: the step's median alone moved by 10% between minutes on a virtual machine.
void compare_run_with_step(const config::TrainConfig& c, int steps, std::ostream& out) {
  EngineStep engine(c, "");
  for (int i = 0; i < 2; ++i) engine.step();
  double step_tps = 0, run_tps = 0;
  for (int round = 0; round < 2; ++round) {
    step_tps = std::max(step_tps, median_step_tokens_per_s(engine));
    run_tps = std::max(run_tps, real_run_tokens_per_s(c, steps));
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "run of %d steps (diagnostics, evaluation, checkpoints), %d threads, best of two turns each: %.0f "
                "tokens/s; the step alone (median): %.0f tokens/s; the run loses %.1f%% (target <= 10%%)\n",
                steps, omp_get_max_threads(), run_tps, step_tps, 100.0 * (1.0 - run_tps / step_tps));
  out << line;
}

double peak_rss_mib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace

int run_train_bench(const TrainBenchOptions& options, std::ostream& out) {
  const config::TrainConfig& c = options.config;
  const int max_threads = omp_get_max_threads();
  if (options.diagnostics_steps > 0) {
    compare_diagnostics(c, options.diagnostics_steps, out);
    return 0;
  }
  if (!options.recipe.empty()) {
    char head[256];
    std::snprintf(head, sizeof head, "train-step benchmark: %d layers, %d heads, %d channels, batch %d x %d tokens, %d threads, best of %d steps\n",
                  c.n_layer, c.n_head, c.n_embd, c.batch_size, c.block_size, max_threads, options.steps);
    out << head;
    return run_recipe_bench(options, out);
  }
  std::vector<int> threads = {1};
  if (max_threads > 1) threads.push_back(max_threads);

  char line[256];
  std::snprintf(line, sizeof line,
                "train-step benchmark: %d layers, %d heads, %d channels, batch %d x %d tokens, best of %d steps, "
                "%d round(s) in turn with PyTorch\n",
                c.n_layer, c.n_head, c.n_embd, c.batch_size, c.block_size, options.steps, options.rounds);
  out << line;
  // Each engine's best over the rounds: the two take turns, so a drift in the machine's speed
  // reaches both.
  std::vector<double> engine(threads.size(), 0.0), pytorch(threads.size(), 0.0);
  nlohmann::json torch;
  for (int round = 0; round < options.rounds; ++round) {
    for (std::size_t i = 0; i < threads.size(); ++i) {
      engine[i] = std::max(engine[i], engine_tokens_per_s(c, options.steps, threads[i]));
    }
    omp_set_num_threads(max_threads);
    torch = torch_runs(c, options.steps, threads);
    for (const auto& run : torch["runs"]) {
      const auto at = std::find(threads.begin(), threads.end(), run["threads"].get<int>());
      if (at == threads.end()) throw std::runtime_error("bench train: PyTorch reported a thread count not asked for");
      double& best = pytorch[static_cast<std::size_t>(at - threads.begin())];
      best = std::max(best, run["tokens_per_s"].get<double>());
    }
  }
  const double step_flops = EngineStep(c, "").flops();
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const double step_gflops = step_flops / (static_cast<double>(c.batch_size * c.block_size) / engine[i]) / 1e9;
    const double ceiling = sgemm_gflops(threads[i]);
    std::snprintf(line, sizeof line,
                  "%-8s threads %d  %10.0f tokens/s  %6.1f GFLOP/s = %3.0f%% of SGEMM's %.1f (1024^3; own GEMM %.1f)\n",
                  "altgrad", threads[i], engine[i], step_gflops, 100.0 * step_gflops / ceiling, ceiling,
                  own_gemm_gflops(threads[i]));
    out << line;
  }
  omp_set_num_threads(max_threads);
  const double engine_peak = peak_rss_mib();
  for (std::size_t i = 0; i < threads.size(); ++i) {
    std::snprintf(line, sizeof line, "%-8s threads %d  %10.0f tokens/s\n", "pytorch", threads[i], pytorch[i]);
    out << line;
  }
  for (std::size_t i = 0; i < threads.size(); ++i) {
    std::snprintf(line, sizeof line, "threads %d: altgrad / pytorch %.2fx\n", threads[i], engine[i] / pytorch.at(i));
    out << line;
  }
  const double engine_best = *std::max_element(engine.begin(), engine.end());
  const double torch_best = *std::max_element(pytorch.begin(), pytorch.end());
  std::snprintf(line, sizeof line, "best: altgrad %.0f tokens/s, pytorch %s %.0f tokens/s, ratio %.2fx\n", engine_best,
                torch["torch"].get<std::string>().c_str(), torch_best, engine_best / torch_best);
  out << line;
  std::snprintf(line, sizeof line, "peak memory (RSS): altgrad %.0f MiB, pytorch %.0f MiB\n", engine_peak,
                torch["peak_rss_mib"].get<double>());
  out << line;
  if (options.run_steps > 0) compare_run_with_step(c, options.run_steps, out);
  return 0;
}

}  // namespace altgrad::bench
