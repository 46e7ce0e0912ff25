// `altgrad train [CONFIG] [--set k=v ...] [--out DIR] [--resume DIR] [--dump-batch STEP ...]`.
#include <unistd.h>

#include <cmath>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "checkpoint/evaluation_hooks.hpp"
#include "cli/commands.hpp"
#include "cli/stop_signal.hpp"
#include "config/config.hpp"
#include "io/run_directory.hpp"
#include "io/safetensors.hpp"
#include "model/sample.hpp"
#include "optim/memory_footprint.hpp"
#include "train/trainer.hpp"
#include "train/training_data.hpp"

namespace altgrad::cli {
namespace {

namespace fs = std::filesystem;

struct TrainArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string out;
  std::string resume;
  std::string inject_nan;  // POINT@STEP
  std::vector<std::int64_t> dump_batches;  // steps, counted as metrics.jsonl counts them (from 1)
};

// "h.1.mlp.c_fc:act@5" → (point, step).
std::pair<std::string, std::int64_t> parse_injection(const std::string& text) {
  const auto at = text.rfind('@');
  std::int64_t step = -1;
  if (at != std::string::npos) {
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data() + at + 1, end, step);
    if (ec != std::errc() || ptr != end) step = -1;
  }
  if (at == std::string::npos || at == 0 || step < 1) {
    throw std::invalid_argument("--inject-nan " + text + ": expected POINT@STEP with STEP >= 1, e.g. h.0.mlp.c_fc:act@3");
  }
  return {text.substr(0, at), step};
}

config::TrainConfig resolve_config(const TrainArgs& args) {
  if (!args.resume.empty()) {
    // A resumed run keeps its resolved config; --set may still change e.g. max_iters.
    return config::load_config(fs::path(args.resume) / io::run_directory::kConfig, args.overrides);
  }
  if (args.config.empty()) return config::parse_config("", "(defaults)", args.overrides);
  return config::load_config(args.config, args.overrides);
}

// The training batches of step `step` (as metrics.jsonl numbers it: the step's index plus one),
// drawn exactly as the trainer draws them, into <run>/batches/step_<step>.safetensors: `tokens` and
// `targets`, (gradient_accumulation_steps, batch_size, block_size), byte values stored as F32. For
// recomputing a step's diagnostics outside the engine.
void dump_batch(const config::TrainConfig& config, const fs::path& run_dir, std::int64_t step) {
  if (step < 1 || step > config.max_iters) {
    throw std::invalid_argument("--dump-batch " + std::to_string(step) + ": steps run from 1 to max_iters (" +
                                std::to_string(config.max_iters) + ")");
  }
  const data::ByteDataset data = train::load_training_data(config, ALTGRAD_SOURCE_DIR);
  const std::size_t micro = static_cast<std::size_t>(config.gradient_accumulation_steps);
  const std::size_t n = static_cast<std::size_t>(config.batch_size) * static_cast<std::size_t>(config.block_size);
  std::vector<std::int32_t> x(n), y(n);
  std::vector<float> tokens, targets;
  for (std::size_t m = 0; m < micro; ++m) {
    data.get_batch(data::BatchKey::training(static_cast<std::uint64_t>(step - 1), static_cast<std::uint32_t>(m)),
                   config.batch_size, config.block_size, x, y);
    tokens.insert(tokens.end(), x.begin(), x.end());
    targets.insert(targets.end(), y.begin(), y.end());
  }
  const std::vector<std::int64_t> shape = {static_cast<std::int64_t>(micro), config.batch_size, config.block_size};
  const io::TensorRef tensors[] = {{"tokens", shape, tokens}, {"targets", shape, targets}};
  fs::create_directories(run_dir / "batches");
  io::write_safetensors(run_dir / "batches" / ("step_" + std::to_string(step) + ".safetensors"), tensors);
}

void run(const TrainArgs& args) {
  const config::TrainConfig config = resolve_config(args);
  train::TrainOptions options;
  options.resume = !args.resume.empty();
  options.run_dir = options.resume ? fs::path(args.resume) : fs::path(args.out.empty() ? config.out_dir : args.out);
  if (!options.resume && fs::exists(options.run_dir / io::run_directory::kMetrics)) {
    throw std::invalid_argument("run directory " + options.run_dir.string() +
                                " already holds a run; continue it with --resume " + options.run_dir.string() +
                                " or choose another --out");
  }
  options.repo_root = ALTGRAD_SOURCE_DIR;
  options.progress = &std::cerr;
  options.terminal = ::isatty(STDERR_FILENO) != 0;
  if (!args.inject_nan.empty()) options.inject_nan = parse_injection(args.inject_nan);
  for (const std::int64_t step : args.dump_batches) dump_batch(config, options.run_dir, step);
  catch_sigterm();
  options.interruption = received_stop_signal;
  const train::TrainOutcome outcome = train::train(config, options);

  std::printf("run directory: %s\n", outcome.run_dir.c_str());
  std::printf("stop reason: %s\n", outcome.stop_reason.c_str());
  // No sample: the time between SIGTERM and SIGKILL is for the checkpoint, not for generating text.
  if (outcome.interrupted) throw CommandFailed{kExitInterrupted};
  std::printf("final val loss: %.4f\n", outcome.final_val_loss);
  std::printf("warnings: %llu (events.jsonl)\n", static_cast<unsigned long long>(outcome.warnings));
  std::printf("memory: %s\n", optim::describe(outcome.memory, outcome.parameters).c_str());
  if (!outcome.last_checkpoint.empty()) {
    model::Gpt<float> trained(checkpoint::load_checkpoint_config(outcome.last_checkpoint));
    checkpoint::load_model(outcome.last_checkpoint, trained);
    model::SampleOptions sample_options;
    sample_options.tokens = 300;
    sample_options.seed = config.seed;
    checkpoint::EvaluationHooks hooks = checkpoint::evaluation_hooks(outcome.last_checkpoint, trained.matmuls(), "");
    std::printf("sample:\n%s\n", model::sample(trained, "\n", sample_options, hooks.get()).c_str());
  }
  if (outcome.stop_reason != "completed") throw CommandFailed{1};
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "Train a GPT on a corpus (the default legal corpus unless the config says otherwise)");
  auto args = std::make_shared<TrainArgs>();
  cmd->add_option("config", args->config, "TOML config (see configs/); defaults when omitted");
  cmd->add_option("--set", args->overrides, "Override a config key: --set key=value (repeatable)");
  cmd->add_option("--out", args->out, "Run directory (default: the config's out_dir)");
  cmd->add_option("--resume", args->resume, "Continue the run in this directory from its latest checkpoint");
  cmd->add_option("--inject-nan", args->inject_nan,
                  "Make the operand at quantization point POINT NaN in step STEP (POINT@STEP, steps count from 1), to try the stop path");
  cmd->add_option("--dump-batch", args->dump_batches,
                  "Write the training batch of step STEP (numbered as in metrics.jsonl) to "
                  "<run>/batches/step_STEP.safetensors (repeatable)");
  cmd->callback([args] { run(*args); });
}

}  // namespace altgrad::cli
