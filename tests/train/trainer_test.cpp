// The training loop end to end on a tiny model and a small generated corpus: learning, determinism,
// bit-identical resume, checkpoint contents and checkpoint errors.
#include "train/trainer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "model/gpt.hpp"
#include "support/scratch_dir.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

TEST(Trainer, LossFallsOnAStructuredCorpus) {
  test_support::ScratchDir dir;
  config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
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
  test_support::ScratchDir dir;
  config::TrainConfig c;  // every default (model, optimizer, schedule), only shortened
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
  test_support::ScratchDir dir;
  const config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome a = run(c, dir.path() / "a");
  const TrainOutcome b = run(c, dir.path() / "b");
  EXPECT_EQ(final_parameters(a.last_checkpoint), final_parameters(b.last_checkpoint));
  EXPECT_EQ(logged_losses(dir.path() / "a"), logged_losses(dir.path() / "b"));
}

TEST(Trainer, ResumingHalfwayContinuesBitForBit) {
  test_support::ScratchDir dir;
  const config::TrainConfig full = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome straight = run(full, dir.path() / "straight");

  config::TrainConfig half = full;
  half.max_iters = 4;  // the schedule (lr_decay_iters = 8) is the full run's
  run(half, dir.path() / "split");
  const TrainOutcome resumed = run(full, dir.path() / "split", /*resume=*/true);

  EXPECT_EQ(resumed.steps, 8);
  EXPECT_EQ(final_parameters(resumed.last_checkpoint), final_parameters(straight.last_checkpoint));
  EXPECT_EQ(logged_losses(dir.path() / "split"), logged_losses(dir.path() / "straight"));
}

TEST(Trainer, CheckpointsHoldTheModelTheOptimizerAndTheState) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome outcome = run(c, dir.path() / "run");
  EXPECT_EQ(outcome.last_checkpoint, dir.path() / "run" / "checkpoints" / "step_8");
  for (const char* file : {"model.safetensors", "optimizer.safetensors", "config.json", "state.json"}) {
    EXPECT_TRUE(fs::exists(outcome.last_checkpoint / file)) << file;
  }
  const auto tensors = io::read_safetensors(outcome.last_checkpoint / "model.safetensors").tensors;
  // nanoGPT's state_dict carries the tied head under both names.
  EXPECT_EQ(tensors.at("lm_head.weight").data, tensors.at("transformer.wte.weight").data);
  EXPECT_EQ(tensors.at("transformer.h.1.mlp.c_fc.weight").shape, (std::vector<std::int64_t>{128, 32}));
  const checkpoint::CheckpointState state = checkpoint::load_state(outcome.last_checkpoint);
  EXPECT_EQ(state.step, 8);
  EXPECT_TRUE(std::isfinite(state.val_loss));
  EXPECT_TRUE(fs::exists(dir.path() / "run" / "config.toml"));
}

TEST(Trainer, KeepsTheLastKCheckpointsAndTheBest) {
  test_support::ScratchDir dir;
  config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
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
  test_support::ScratchDir dir;
  const config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome outcome = run(c, dir.path() / "run");
  model::GptConfig other = checkpoint::load_checkpoint_config(outcome.last_checkpoint);
  other.n_embd = 64;
  model::Gpt<float> wider(other);
  try {
    checkpoint::load_model(outcome.last_checkpoint, wider);
    FAIL() << "a 32-channel checkpoint loaded into a 64-channel model";
  } catch (const io::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("transformer.wte.weight"), std::string::npos) << e.what();
  }
}

TEST(Trainer, ATruncatedCheckpointIsAnErrorNotACrash) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome outcome = run(c, dir.path() / "run");
  const fs::path model_file = outcome.last_checkpoint / "model.safetensors";
  fs::resize_file(model_file, fs::file_size(model_file) / 2);
  model::Gpt<float> gpt(checkpoint::load_checkpoint_config(outcome.last_checkpoint));
  EXPECT_THROW(checkpoint::load_model(outcome.last_checkpoint, gpt), io::CheckpointError);
}

}  // namespace
}  // namespace altgrad::train

namespace altgrad::train {
namespace {

// stop_loss_multiple = m stops the run at the first step whose loss exceeds m × the first step's
// loss: found here in the losses of the same run without the criterion, which it must match.
TEST(Trainer, StopLossMultipleStopsAtTheFirstLossAboveTheMultiple) {
  test_support::ScratchDir dir;
  config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  c.learning_rate = 0.5;  // AdamW without clipping at this rate overshoots: the loss rises
  c.min_lr = 0.0;
  c.grad_clip = 0.0;
  c.max_iters = c.lr_decay_iters = 16;
  run(c, dir.path() / "free");
  const auto losses = logged_losses(dir.path() / "free");
  ASSERT_EQ(losses.size(), 16u);
  const double peak = *std::max_element(losses.begin() + 1, losses.end());
  ASSERT_GT(peak, losses[0]) << "the test needs a loss that rises above the first";
  c.stop_loss_multiple = (1.0 + peak / losses[0]) / 2;  // between 1 and the peak's ratio
  std::size_t expected = 0;                              // the first step (from 1) above it
  while (!(losses[expected] > c.stop_loss_multiple * losses[0])) ++expected;
  ++expected;

  const TrainOutcome stopped = run(c, dir.path() / "stopped");
  EXPECT_EQ(stopped.steps, static_cast<std::int64_t>(expected) - 1);
  EXPECT_EQ(stopped.stop_reason.rfind("loss diverged at step " + std::to_string(expected) + ": ", 0), 0u)
      << stopped.stop_reason;
  EXPECT_EQ(logged_losses(dir.path() / "stopped"),
            std::vector<double>(losses.begin(), losses.begin() + static_cast<std::ptrdiff_t>(expected) - 1));
  if (!stopped.last_checkpoint.empty()) {  // the first loss is kept for a resumed run
    EXPECT_EQ(checkpoint::load_state(stopped.last_checkpoint).initial_loss, losses[0]);
  }
}

// A run interrupted before its first evaluation still tracks its best evaluation after resuming
// (state.json stores "no evaluation yet" as null, which must read back as no loss, not NaN).
TEST(Trainer, ResumingBeforeTheFirstEvaluationKeepsTrackingTheBest) {
  test_support::ScratchDir dir;
  config::TrainConfig full = tiny_config(dir.write("corpus.txt", generated_corpus()));
  full.eval_interval = 8;
  const TrainOutcome straight = run(full, dir.path() / "straight");
  config::TrainConfig half = full;
  half.max_iters = 4;
  run(half, dir.path() / "split");
  const TrainOutcome resumed = run(full, dir.path() / "split", /*resume=*/true);
  const checkpoint::CheckpointState a = checkpoint::load_state(straight.last_checkpoint),
                                    b = checkpoint::load_state(resumed.last_checkpoint);
  EXPECT_EQ(a.best_step, 8);
  EXPECT_EQ(b.best_step, a.best_step);
  EXPECT_EQ(b.best_val_loss, a.best_val_loss);
}

}  // namespace
}  // namespace altgrad::train
