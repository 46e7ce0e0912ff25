// `altgrad train [CONFIG] [--set k=v ...] [--out DIR] [--resume DIR]`.
#include <unistd.h>

#include <cmath>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "model/sample.hpp"
#include "train/checkpoint.hpp"
#include "train/config.hpp"
#include "train/evaluation_hooks.hpp"
#include "train/trainer.hpp"

namespace altgrad::cli {
namespace {

namespace fs = std::filesystem;

struct TrainArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string out;
  std::string resume;
  std::string inject_nan;  // POINT@STEP
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

train::TrainConfig resolve_config(const TrainArgs& args) {
  if (!args.resume.empty()) {
    // A resumed run keeps its resolved config; --set may still change e.g. max_iters.
    return train::load_config(fs::path(args.resume) / "config.toml", args.overrides);
  }
  if (args.config.empty()) return train::parse_config("", "(defaults)", args.overrides);
  return train::load_config(args.config, args.overrides);
}

void run(const TrainArgs& args) {
  const train::TrainConfig config = resolve_config(args);
  train::TrainOptions options;
  options.resume = !args.resume.empty();
  options.run_dir = options.resume ? fs::path(args.resume) : fs::path(args.out.empty() ? config.out_dir : args.out);
  if (!options.resume && fs::exists(options.run_dir / "metrics.jsonl")) {
    throw std::invalid_argument("run directory " + options.run_dir.string() +
                                " already holds a run; continue it with --resume " + options.run_dir.string() +
                                " or choose another --out");
  }
  options.repo_root = ALTGRAD_SOURCE_DIR;
  options.progress = &std::cerr;
  options.terminal = ::isatty(STDERR_FILENO) != 0;
  if (!args.inject_nan.empty()) options.inject_nan = parse_injection(args.inject_nan);
  const train::TrainOutcome outcome = train::train(config, options);

  std::printf("run directory: %s\n", outcome.run_dir.c_str());
  std::printf("stop reason: %s\n", outcome.stop_reason.c_str());
  std::printf("final val loss: %.4f\n", outcome.final_val_loss);
  std::printf("warnings: %llu (events.jsonl)\n", static_cast<unsigned long long>(outcome.warnings));
  if (!outcome.last_checkpoint.empty()) {
    model::Gpt<float> trained(train::load_checkpoint_config(outcome.last_checkpoint));
    train::load_model(outcome.last_checkpoint, trained);
    model::SampleOptions sample_options;
    sample_options.tokens = 300;
    sample_options.seed = config.seed;
    train::EvaluationHooks hooks = train::evaluation_hooks(outcome.last_checkpoint, trained.matmuls(), "");
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
  cmd->callback([args] { run(*args); });
}

}  // namespace altgrad::cli
