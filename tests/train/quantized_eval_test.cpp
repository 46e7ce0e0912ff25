// Evaluating a checkpoint trained with delayed scaling (what `altgrad eval` and `altgrad sample`
// run): the forward pass uses the scales saved in its quant.safetensors, the ones the next training
// step would use. Held to PyTorch on the same weights with those scales and an E4M3 rounding written
// from its definition (tests/reference/torch_quantized_eval.py), and shown to move when a saved
// scale moves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/evaluation_hooks.hpp"
#include "io/safetensors.hpp"
#include "model/activations.hpp"
#include "support/scratch_dir.hpp"
#include "support/torch_reference.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

constexpr std::size_t kBatch = 4;


// A few fp8-hybrid steps (E4M3 forward, delayed scaling), the LM head included: the last checkpoint
// holds real amax histories and scales far from 1. The LM head is what makes the loss depend
// visibly on the scales of a model this young, whose blocks still add little to the residual stream.
fs::path trained_checkpoint(const test_support::ScratchDir& dir) {
  config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  c.quant = config::parse_config("[quant]\npreset = \"fp8-hybrid\"\n[[quant.override]]\nmatch = \"lm_head:*\"\n", "test.toml").quant;
  return run(c, dir.path() / "run").last_checkpoint;
}

struct EvalBatch {
  std::vector<std::int32_t> tokens, targets;
};

EvalBatch batch_of(std::size_t T) {
  EvalBatch b{std::vector<std::int32_t>(kBatch * T), std::vector<std::int32_t>(kBatch * T)};
  const std::string text = generated_corpus();
  for (std::size_t i = 0; i < b.tokens.size(); ++i) {
    b.tokens[i] = static_cast<std::uint8_t>(text[i + 1000]);
    b.targets[i] = static_cast<std::uint8_t>(text[i + 1001]);
  }
  return b;
}

// The loss the evaluation path computes for `batch` on the checkpoint as it is on disk.
float evaluated_loss(const fs::path& checkpoint, const EvalBatch& batch) {
  model::Gpt<float> gpt(checkpoint::load_checkpoint_config(checkpoint));
  checkpoint::load_model(checkpoint, gpt);
  checkpoint::EvaluationHooks hooks = checkpoint::evaluation_hooks(checkpoint, gpt.matmuls(), "");
  EXPECT_TRUE(hooks.hooks.has_value());
  model::Activations<float> acts(gpt.config(), kBatch, gpt.config().block_size, model::OperandCopies::allocated);
  return model::gpt_forward(gpt, acts, batch.tokens, batch.targets, hooks.get());
}

// Rewrites every "<point>.scale" of the checkpoint's quant.safetensors as scale · factor.
void scale_saved_scales(const fs::path& checkpoint, float factor) {
  io::SafetensorsFile file = io::read_safetensors(checkpoint / "quant.safetensors");
  std::vector<io::TensorRef> tensors;
  for (auto& [name, tensor] : file.tensors) {
    if (name.ends_with(".scale")) tensor.data[0] *= factor;
    tensors.push_back({name, tensor.shape, tensor.data});
  }
  io::write_safetensors(checkpoint / "quant.safetensors", tensors);
}

TEST(QuantizedEval, DelayedScalingCheckpointAgreesWithPyTorchAtTheSavedScales) {
  if (!test_support::python_imports("torch")) GTEST_SKIP() << "PyTorch not found: " << test_support::kPython << " cannot import torch (scripts/setup.sh installs python3-torch)";
  test_support::ScratchDir dir;
  const fs::path checkpoint = trained_checkpoint(dir);
  const std::size_t T = checkpoint::load_checkpoint_config(checkpoint).block_size;
  const EvalBatch batch = batch_of(T);
  const std::vector<float> loss{evaluated_loss(checkpoint, batch)};
  const std::vector<float> tokens(batch.tokens.begin(), batch.tokens.end());
  const std::vector<float> targets(batch.targets.begin(), batch.targets.end());
  const auto rows = static_cast<std::int64_t>(kBatch), cols = static_cast<std::int64_t>(T);
  const std::vector<io::TensorRef> tensors{{"tokens", {rows, cols}, tokens}, {"targets", {rows, cols}, targets}, {"loss", {1}, loss}};
  io::write_safetensors(dir.path() / "batch.safetensors", tensors);
  const std::string command = std::string(test_support::kPython) + " " + ALTGRAD_SOURCE_DIR + "/tests/reference/torch_quantized_eval.py " +
                              checkpoint.string() + " " + (dir.path() / "batch.safetensors").string();
  EXPECT_EQ(std::system(command.c_str()), 0) << "PyTorch disagrees (see the lines above)";
}

TEST(QuantizedEval, AChangedSavedScaleChangesTheLoss) {
  test_support::ScratchDir dir;
  const fs::path checkpoint = trained_checkpoint(dir);
  const EvalBatch batch = batch_of(checkpoint::load_checkpoint_config(checkpoint).block_size);
  const float saved = evaluated_loss(checkpoint, batch);
  const fs::path original = dir.path() / "quant.safetensors";
  fs::copy_file(checkpoint / "quant.safetensors", original);
  // Scales 10^4 times smaller put every operand 10^4 times lower on E4M3's grid, much of it among the
  // subnormals or below them. An evaluation ignoring the file would give the same bits; the change
  // asked for is a hundred times a float32 loss's rounding (measured: 8e-5 relative on OpenBLAS's
  // SkylakeX kernel).
  scale_saved_scales(checkpoint, 1e-4f);
  const float shrunk = evaluated_loss(checkpoint, batch);
  EXPECT_GT(std::fabs(shrunk - saved), 1e-5f * saved) << "saved " << saved << ", scales · 1e-4 " << shrunk;
  // A milder change, every scale a quarter lower, moves values across rounding boundaries too.
  fs::copy_file(original, checkpoint / "quant.safetensors", fs::copy_options::overwrite_existing);
  scale_saved_scales(checkpoint, 0.75f);
  EXPECT_NE(evaluated_loss(checkpoint, batch), saved);
  fs::copy_file(original, checkpoint / "quant.safetensors", fs::copy_options::overwrite_existing);
  EXPECT_EQ(evaluated_loss(checkpoint, batch), saved);
}

}  // namespace
}  // namespace altgrad::train
