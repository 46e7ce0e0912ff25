// The training loop end to end on a tiny model and a small generated corpus: learning, determinism,
// bit-identical resume, checkpoint contents and checkpoint errors.
#include "train/trainer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/gpt.hpp"
#include "train/checkpoint.hpp"
#include "train/scratch_dir.hpp"

namespace altgrad::train {
namespace {

namespace fs = std::filesystem;

// A few kilobytes of text with structure a tiny model can learn: words from a small vocabulary.
std::string generated_corpus() {
  const std::vector<std::string> words = {"the", "court", "shall", "decide", "on", "appeal", "of", "a", "party", "within"};
  std::string text;
  std::uint32_t state = 12345;
  while (text.size() < 40'000) {
    state = state * 1664525u + 1013904223u;
    text += words[(state >> 16) % words.size()];
    text += (state >> 8) % 7 == 0 ? ".\n" : " ";
  }
  return text;
}

TrainConfig tiny_config(const fs::path& corpus) {
  TrainConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 32;
  c.block_size = 32;
  c.batch_size = 4;
  c.max_iters = 8;
  c.lr_decay_iters = 8;
  c.warmup_iters = 2;
  c.eval_interval = 4;
  c.eval_iters = 2;
  c.log_interval = 1;
  c.checkpoint_interval = 4;
  c.keep_checkpoints = 0;
  c.data = corpus.string();
  return c;
}

std::vector<double> logged_losses(const fs::path& run_dir) {
  std::vector<double> losses;
  std::ifstream in(run_dir / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) losses.push_back(nlohmann::json::parse(line).at("loss").get<double>());
  return losses;
}

std::vector<float> final_parameters(const fs::path& checkpoint) {
  model::Gpt<float> gpt(load_checkpoint_config(checkpoint));
  load_model(checkpoint, gpt);
  return {gpt.parameters().begin(), gpt.parameters().end()};
}

TrainOutcome run(const TrainConfig& config, const fs::path& run_dir, bool resume = false) {
  TrainOptions options;
  options.run_dir = run_dir;
  options.resume = resume;
  return train(config, options);
}

TEST(Trainer, LossFallsOnAStructuredCorpus) {
  testing::ScratchDir dir;
  TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  c.max_iters = c.lr_decay_iters = 60;
  c.eval_interval = 60;
  c.learning_rate = 3e-3;
  c.min_lr = 3e-4;
  const TrainOutcome outcome = run(c, dir.path() / "run");
  EXPECT_EQ(outcome.stop_reason, "completed");
  const auto losses = logged_losses(dir.path() / "run");
  ASSERT_EQ(losses.size(), 60u);
  EXPECT_NEAR(losses.front(), std::log(256.0), 0.3);  // an untrained model guesses uniformly
  EXPECT_LT(outcome.final_val_loss, losses.front() - 1.5);
}

TEST(Trainer, TheDefaultConfigsLossFalls) {
  testing::ScratchDir dir;
  TrainConfig c;  // every default (model, optimizer, schedule), only shortened
  c.data = dir.write("corpus.txt", generated_corpus()).string();
  c.max_iters = 20;
  c.eval_interval = 20;
  c.eval_iters = 2;
  c.log_interval = 1;
  c.checkpoint_interval = 0;
  run(c, dir.path() / "run");
  const auto losses = logged_losses(dir.path() / "run");
  ASSERT_EQ(losses.size(), 20u);
  EXPECT_LT(losses.back(), losses.front() - 1.0) << "first " << losses.front() << ", last " << losses.back();
}

TEST(Trainer, TheSameConfigGivesTheSameBits) {
  testing::ScratchDir dir;
  const TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome a = run(c, dir.path() / "a");
  const TrainOutcome b = run(c, dir.path() / "b");
  EXPECT_EQ(final_parameters(a.last_checkpoint), final_parameters(b.last_checkpoint));
  EXPECT_EQ(logged_losses(dir.path() / "a"), logged_losses(dir.path() / "b"));
}

TEST(Trainer, ResumingHalfwayContinuesBitForBit) {
  testing::ScratchDir dir;
  const TrainConfig full = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome straight = run(full, dir.path() / "straight");

  TrainConfig half = full;
  half.max_iters = 4;  // the schedule (lr_decay_iters = 8) is the full run's
  run(half, dir.path() / "split");
  const TrainOutcome resumed = run(full, dir.path() / "split", /*resume=*/true);

  EXPECT_EQ(resumed.steps, 8);
  EXPECT_EQ(final_parameters(resumed.last_checkpoint), final_parameters(straight.last_checkpoint));
  EXPECT_EQ(logged_losses(dir.path() / "split"), logged_losses(dir.path() / "straight"));
}

TEST(Trainer, CheckpointsHoldTheModelTheOptimizerAndTheState) {
  testing::ScratchDir dir;
  const TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome outcome = run(c, dir.path() / "run");
  EXPECT_EQ(outcome.last_checkpoint, dir.path() / "run" / "checkpoints" / "step_8");
  for (const char* file : {"model.safetensors", "optimizer.safetensors", "config.json", "state.json"}) {
    EXPECT_TRUE(fs::exists(outcome.last_checkpoint / file)) << file;
  }
  const auto tensors = read_safetensors(outcome.last_checkpoint / "model.safetensors").tensors;
  // nanoGPT's state_dict carries the tied head under both names.
  EXPECT_EQ(tensors.at("lm_head.weight").data, tensors.at("transformer.wte.weight").data);
  EXPECT_EQ(tensors.at("transformer.h.1.mlp.c_fc.weight").shape, (std::vector<std::int64_t>{128, 32}));
  const CheckpointState state = load_state(outcome.last_checkpoint);
  EXPECT_EQ(state.step, 8);
  EXPECT_TRUE(std::isfinite(state.val_loss));
  EXPECT_TRUE(fs::exists(dir.path() / "run" / "config.toml"));
}

TEST(Trainer, KeepsTheLastKCheckpointsAndTheBest) {
  testing::ScratchDir dir;
  TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  c.max_iters = c.lr_decay_iters = 12;
  c.eval_interval = 12;  // the only evaluation, so the best is the last
  c.checkpoint_interval = 2;
  c.keep_checkpoints = 2;
  run(c, dir.path() / "run");
  std::vector<std::string> kept;
  for (const auto& entry : fs::directory_iterator(dir.path() / "run" / "checkpoints")) kept.push_back(entry.path().filename());
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"step_10", "step_12"}));
}

TEST(Trainer, ACheckpointOfAnotherShapeIsRefusedWithTheTensorNamed) {
  testing::ScratchDir dir;
  const TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome outcome = run(c, dir.path() / "run");
  model::GptConfig other = load_checkpoint_config(outcome.last_checkpoint);
  other.n_embd = 64;
  model::Gpt<float> wider(other);
  try {
    load_model(outcome.last_checkpoint, wider);
    FAIL() << "a 32-channel checkpoint loaded into a 64-channel model";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("transformer.wte.weight"), std::string::npos) << e.what();
  }
}

TEST(Trainer, ATruncatedCheckpointIsAnErrorNotACrash) {
  testing::ScratchDir dir;
  const TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome outcome = run(c, dir.path() / "run");
  const fs::path model_file = outcome.last_checkpoint / "model.safetensors";
  fs::resize_file(model_file, fs::file_size(model_file) / 2);
  model::Gpt<float> gpt(load_checkpoint_config(outcome.last_checkpoint));
  EXPECT_THROW(load_model(outcome.last_checkpoint, gpt), CheckpointError);
}

}  // namespace
}  // namespace altgrad::train
