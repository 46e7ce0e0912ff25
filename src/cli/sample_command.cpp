// `altgrad sample --checkpoint DIR [--prompt S] [--tokens N] [--temperature T] [--top-k K] [--seed S]
// [--recipe PRESET|DIR]`: the forward pass quantized as the run trained, unless a preset or another run says
// otherwise.
#include <cstdio>
#include <memory>
#include <string>

#include "checkpoint/checkpoint.hpp"
#include "checkpoint/evaluation_hooks.hpp"
#include "cli/commands.hpp"
#include "model/sample.hpp"

namespace altgrad::cli {

void add_sample_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sample", "Generate text from a checkpoint");
  struct SampleArgs {
    std::string checkpoint;
    std::string prompt = "\n";
    model::SampleOptions options;
    std::string recipe;  // empty: the checkpoint's
  };
  auto args = std::make_shared<SampleArgs>();
  cmd->add_option("--checkpoint", args->checkpoint, "Checkpoint directory, or a run directory (its latest)")->required();
  cmd->add_option("--prompt", args->prompt, "Text to continue")->capture_default_str();
  cmd->add_option("--tokens", args->options.tokens, "Bytes to generate")->capture_default_str();
  cmd->add_option("--temperature", args->options.temperature, "Sampling temperature (> 0)")->capture_default_str();
  cmd->add_option("--top-k", args->options.top_k, "Sample among the k most likely bytes (0 = all)")->capture_default_str();
  cmd->add_option("--seed", args->options.seed, "Seed; the same seed gives the same text")->capture_default_str();
  cmd->add_option("--recipe", args->recipe,
                  "Quantize the forward pass with this preset, or with the recipe of this run or checkpoint directory, instead of the checkpoint's own (fp32: none)");
  cmd->callback([args] {
    const auto dir = checkpoint::resolve_checkpoint(args->checkpoint);
    model::Gpt<float> gpt(checkpoint::load_checkpoint_config(dir));
    checkpoint::load_model(dir, gpt);
    checkpoint::EvaluationHooks hooks = checkpoint::evaluation_hooks(dir, gpt.matmuls(), args->recipe);
    std::printf("%s%s\n", args->prompt.c_str(), model::sample(gpt, args->prompt, args->options, hooks.get()).c_str());
  });
}

}  // namespace altgrad::cli
