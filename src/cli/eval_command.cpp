// `altgrad eval --checkpoint DIR --text FILE [--max-windows N] [--recipe PRESET|DIR]`: mean
// cross-entropy of a text, with the forward pass quantized as the run trained (the checkpoint's
// recipe and delayed scales), as a preset says (`--recipe fp32`: unquantized), or with the recipe of another
// run (`--recipe runs/e7m0`).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <string>

#include "checkpoint/checkpoint.hpp"
#include "checkpoint/evaluation_hooks.hpp"
#include "cli/commands.hpp"
#include "data/byte_dataset.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"

namespace altgrad::cli {
namespace {

struct EvalArgs {
  std::string checkpoint;
  std::string text;
  std::size_t max_windows = 0;
  std::string recipe;  // empty: the checkpoint's
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot read text file " + path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Consecutive non-overlapping windows of block_size + 1 bytes from the start of the text: inputs are
// the first block_size bytes, targets the same shifted by one. The loss is the mean over windows.
void run(const EvalArgs& args) {
  const auto dir = checkpoint::resolve_checkpoint(args.checkpoint);
  model::Gpt<float> gpt(checkpoint::load_checkpoint_config(dir));
  checkpoint::load_model(dir, gpt);
  const std::string text = read_file(args.text);
  const std::size_t T = gpt.config().block_size;
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  const std::size_t limit = args.max_windows == 0 ? std::numeric_limits<std::size_t>::max() : args.max_windows;
  const data::TokenWindows windows = data::consecutive_windows(bytes, static_cast<int>(T), limit);
  if (windows.count == 0) {
    throw std::invalid_argument(args.text + " has " + std::to_string(text.size()) + " bytes, fewer than one window of " +
                                std::to_string(T + 1));
  }
  checkpoint::EvaluationHooks hooks = checkpoint::evaluation_hooks(dir, gpt.matmuls(), args.recipe);
  model::MatmulHooks<float>* hooked = hooks.get();
  model::Activations<float> acts(gpt.config(), 1, T, hooked ? model::OperandCopies::allocated : model::OperandCopies::none);
  double sum = 0.0;
  for (std::size_t w = 0; w < windows.count; ++w) {
    const std::span<const std::int32_t> x(windows.x.data() + w * T, T), y(windows.y.data() + w * T, T);
    sum += model::gpt_forward(gpt, acts, x, y, hooked);
  }
  std::printf("recipe %s\n", hooks.recipe_name.c_str());
  std::printf("windows %zu\n", windows.count);
  std::printf("loss %.9g\n", sum / static_cast<double>(windows.count));
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Mean cross-entropy of a checkpoint on a text file");
  auto args = std::make_shared<EvalArgs>();
  cmd->add_option("--checkpoint", args->checkpoint, "Checkpoint directory, or a run directory (its latest)")->required();
  cmd->add_option("--text", args->text, "Text file to evaluate")->required();
  cmd->add_option("--max-windows", args->max_windows, "Evaluate at most N windows (0 = all)");
  cmd->add_option("--recipe", args->recipe,
                  "Quantize the forward pass with this preset, or with the recipe of this run or checkpoint directory, instead of the checkpoint's own (fp32: none)");
  cmd->callback([args] { run(*args); });
}

}  // namespace altgrad::cli
