// `altgrad bench quantize|train`: benchmarks that print ratios against a baseline from the same run.
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "config/config.hpp"
#include "ops/cpu_arithmetic.hpp"
#include "device_train_bench.hpp"
#include "gemm_bench.hpp"
#include "optimizer_bench.hpp"
#include "quantize_bench.hpp"
#include "train_bench.hpp"

namespace altgrad::cli {
namespace {

// Every figure a bench prints holds for one CPU and its kernels: they head its output.
void print_machine() {
  const ops::CpuArithmetic cpu = ops::cpu_arithmetic();
  std::cout << "cpu:  " << cpu.cpu << "\ngemm: own float GEMM, " << cpu.gemm_kernel << " kernel\nblas: "
            << cpu.blas_summary << "\n";
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks, each against a baseline measured in the same run");
  bench->require_subcommand(1);
  auto* quantize = bench->add_subcommand("quantize", "Quantizer throughput vs memcpy of the same buffer");
  auto options = std::make_shared<altgrad::bench::QuantizeBenchOptions>();
  quantize->add_option("--values", options->values, "Values per buffer")->capture_default_str();
  quantize->add_option("--repeats", options->repeats, "Timed passes per case (best is kept)")->capture_default_str();
  quantize->callback([options] {
    print_machine();
    altgrad::bench::run_quantize_bench(*options, std::cout);
  });

  auto* gemm = bench->add_subcommand("gemm", "Emulated tensor-core GEMM rate vs the float GEMM on a step's shapes");
  auto gemm_args = std::make_shared<std::pair<std::string, altgrad::bench::GemmBenchOptions>>();
  gemm->add_option("config", gemm_args->first, "TOML config whose shapes are timed (default: the default config)");
  gemm->add_option("--accumulate", gemm_args->second.accumulate, "Accumulator model (docs/accumulation.md)")
      ->capture_default_str();
  gemm->add_option("--repeats", gemm_args->second.repeats, "Timed calls per GEMM (best is kept)")->capture_default_str();
  gemm->callback([gemm_args] {
    gemm_args->second.config = gemm_args->first.empty() ? config::parse_config("", "(defaults)")
                                                        : config::load_config(gemm_args->first, {});
    print_machine();
    altgrad::bench::run_gemm_bench(gemm_args->second, std::cout);
  });

  auto* train = bench->add_subcommand("train", "Training-step tokens/s vs the PyTorch reference on the same config");
  struct TrainArgs {
    std::string config;
    std::vector<std::string> overrides;
    int steps = 10;
    int rounds = 1;
    int run_steps = 0;
    int diagnostics_steps = 0;
    std::string recipe;
    std::vector<std::string> optimizers;
    std::string device;
  };
  auto train_args = std::make_shared<TrainArgs>();
  train->add_option("config", train_args->config, "TOML config (default: the default training config)");
  train->add_option("--set", train_args->overrides, "Override a config key (repeatable)");
  train->add_option("--steps", train_args->steps, "Timed steps per thread count (best is kept)")->capture_default_str();
  train->add_option("--rounds", train_args->rounds,
                    "Measure altgrad and PyTorch this many times in turn, keeping each one's best (a machine whose "
                    "speed drifts then favours neither)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  train->add_option("--run", train_args->run_steps,
                    "Also train a real run of the config this many steps (diagnostics, evaluation, checkpoints) and "
                    "compare its tokens/s with the step's");
  train->add_option("--diagnostics", train_args->diagnostics_steps,
                    "Instead, train real runs of this many steps with every diagnostic on and off and compare their "
                    "tokens/s");
  train->add_option("--recipe", train_args->recipe,
                    "Compare this quantization preset's step time with FP32's, without and with the error sums behind "
                    "rel_error (unlogged and logged steps; a preset of docs/quantization.md)");
  train->add_option("--device", train_args->device,
                    "Time real runs on this device instead, recipe by recipe: bf16, fp32, fp8-hybrid and mx8, or bf16 "
                    "and --recipe (docs/cuda.md, \"Speed\")")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  train->add_option("--optimizer", train_args->optimizers,
                    "Time this optimizer's step against AdamW's instead (repeatable; gridwalk-codes: gridwalk on code-only weights; docs/optimizers.md)");
  train->callback([train_args] {
    altgrad::bench::TrainBenchOptions bench_options;
    bench_options.config = train_args->config.empty() ? config::parse_config("", "(defaults)", train_args->overrides)
                                                : config::load_config(train_args->config, train_args->overrides);
    bench_options.steps = train_args->steps;
    bench_options.rounds = train_args->rounds;
    bench_options.run_steps = train_args->run_steps;
    bench_options.diagnostics_steps = train_args->diagnostics_steps;
    bench_options.recipe = train_args->recipe;
    print_machine();
    if (!train_args->device.empty()) {
      altgrad::bench::DeviceTrainBenchOptions device{bench_options.config, train_args->steps};
      device.config.device = train_args->device == "cuda" ? config::Device::cuda : config::Device::cpu;
      if (!train_args->recipe.empty() && train_args->recipe != "bf16") device.recipes = {"bf16", train_args->recipe};
      altgrad::bench::run_device_train_bench(device, std::cout);
      return;
    }
    if (!train_args->optimizers.empty()) {
      altgrad::bench::run_optimizer_bench({bench_options.config, train_args->optimizers, train_args->steps}, std::cout);
      return;
    }
    altgrad::bench::run_train_bench(bench_options, std::cout);
  });
}

}  // namespace altgrad::cli
