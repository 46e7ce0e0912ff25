// The optimizer seam end to end: each optimizer trains, resumes bit for bit, and is written to the
// run directory; checkpoints hold the optimizer's named state and refuse to load into another
// optimizer or with a state tensor missing or unnamed.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "io/safetensors.hpp"
#include "optim/make_optimizer.hpp"
#include "support/error_message.hpp"
#include "support/scratch_dir.hpp"
#include "train/resume_check.hpp"
#include "train/trainer.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;
using test_support::message_of;

config::TrainConfig sgd_config(const fs::path& corpus, double momentum, bool nesterov) {
  config::TrainConfig c = tiny_config(corpus);
  c.optimizer = config::OptimizerKind::sgd;
  c.momentum = momentum;
  c.nesterov = nesterov;
  c.learning_rate = 0.1;
  c.min_lr = 0.01;
  return c;
}

TEST(OptimizerChoice, AdamWResumesBitForBit) {
  test_support::ScratchDir dir;
  expect_bit_identical_resume(tiny_config(dir.write("corpus.txt", generated_corpus())), dir.path());
}

TEST(OptimizerChoice, SgdResumesBitForBit) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  expect_bit_identical_resume(sgd_config(corpus, 0.9, false), dir.path() / "momentum");
  expect_bit_identical_resume(sgd_config(corpus, 0.9, true), dir.path() / "nesterov");
  expect_bit_identical_resume(sgd_config(corpus, 0.0, false), dir.path() / "plain");
}

TEST(OptimizerChoice, SgdLowersTheLoss) {
  test_support::ScratchDir dir;
  config::TrainConfig c = sgd_config(dir.write("corpus.txt", generated_corpus()), 0.9, false);
  c.max_iters = c.lr_decay_iters = 60;
  c.eval_interval = 60;
  const TrainOutcome outcome = run(c, dir.path() / "run");
  EXPECT_EQ(outcome.stop_reason, "completed");
  const auto losses = logged_losses(dir.path() / "run");
  ASSERT_EQ(losses.size(), 60u);
  EXPECT_LT(outcome.final_val_loss, losses.front() - 1.0) << "first " << losses.front();
  EXPECT_LT(losses.back(), losses.front() - 1.0) << "first " << losses.front() << ", last " << losses.back();
}

TEST(OptimizerChoice, CheckpointsHoldTheOptimizersNamedState) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  const TrainOutcome adamw = run(tiny_config(corpus), dir.path() / "adamw");
  const TrainOutcome sgd = run(sgd_config(corpus, 0.9, false), dir.path() / "sgd");
  const auto adamw_file = io::read_safetensors(adamw.last_checkpoint / "optimizer.safetensors");
  const auto sgd_file = io::read_safetensors(sgd.last_checkpoint / "optimizer.safetensors");
  EXPECT_EQ(adamw_file.metadata.at("optimizer"), "adamw");
  EXPECT_EQ(adamw_file.metadata.at("step"), "8");
  EXPECT_EQ(adamw_file.tensors.size(), 2u);
  EXPECT_TRUE(adamw_file.tensors.contains("exp_avg") && adamw_file.tensors.contains("exp_avg_sq"));
  EXPECT_EQ(sgd_file.metadata.at("optimizer"), "sgd");
  EXPECT_EQ(sgd_file.tensors.size(), 1u);
  EXPECT_TRUE(sgd_file.tensors.contains("momentum_buffer"));
}

TEST(OptimizerChoice, ASgdCheckpointIsRefusedByAnAdamWConfig) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  config::TrainConfig sgd = sgd_config(corpus, 0.9, false);
  sgd.max_iters = 4;
  run(sgd, dir.path() / "run");
  const std::string message = message_of<std::exception>([&] { run(tiny_config(corpus), dir.path() / "run", /*resume=*/true); });
  EXPECT_NE(message.find("optimizer.safetensors"), std::string::npos) << message;
  EXPECT_NE(message.find("optimizer 'sgd'"), std::string::npos) << message;
  EXPECT_NE(message.find("optimizer 'adamw'"), std::string::npos) << message;
}

TEST(OptimizerChoice, AMissingStateTensorIsRefusedWithItsName) {
  test_support::ScratchDir dir;
  const TrainOutcome outcome = run(tiny_config(dir.write("corpus.txt", generated_corpus())), dir.path() / "run");
  const fs::path file = outcome.last_checkpoint / "optimizer.safetensors";
  const io::SafetensorsFile saved = io::read_safetensors(file);
  const io::Tensor& m = saved.tensors.at("exp_avg");
  io::write_safetensors(file, std::vector<io::TensorRef>{{"exp_avg", m.shape, m.data}}, saved.metadata);

  model::Gpt<float> gpt(checkpoint::load_checkpoint_config(outcome.last_checkpoint));
  auto adamw = optim::make_optimizer({}, gpt.layout().size(), {{0, gpt.layout().size(), true}});
  const std::string message =
      message_of<std::exception>([&] { checkpoint::load_optimizer(outcome.last_checkpoint, *adamw); });
  EXPECT_NE(message.find(file.string()), std::string::npos) << message;
  EXPECT_NE(message.find("'exp_avg_sq'"), std::string::npos) << message;
}

TEST(OptimizerChoice, AnExtraStateTensorIsRefusedWithItsName) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  config::TrainConfig with_momentum = sgd_config(corpus, 0.9, false);
  with_momentum.max_iters = 4;
  run(with_momentum, dir.path() / "run");
  const std::string message =
      message_of<std::exception>([&] { run(sgd_config(corpus, 0.0, false), dir.path() / "run", /*resume=*/true); });
  EXPECT_NE(message.find("'momentum_buffer'"), std::string::npos) << message;
  EXPECT_NE(message.find("optimizer.safetensors"), std::string::npos) << message;
}

// Checkpoints written before optimizers were named carry only the step in their metadata: refused,
// not read as AdamW's (docs/optimizers.md).
TEST(OptimizerChoice, ACheckpointThatNamesNoOptimizerIsRefused) {
  test_support::ScratchDir dir;
  const TrainOutcome outcome = run(tiny_config(dir.write("corpus.txt", generated_corpus())), dir.path() / "run");
  const fs::path file = outcome.last_checkpoint / "optimizer.safetensors";
  const io::SafetensorsFile saved = io::read_safetensors(file);
  const io::Tensor &m = saved.tensors.at("exp_avg"), &v = saved.tensors.at("exp_avg_sq");
  io::write_safetensors(file, std::vector<io::TensorRef>{{"exp_avg", m.shape, m.data}, {"exp_avg_sq", v.shape, v.data}},
                        {{"step", saved.metadata.at("step")}});
  model::Gpt<float> gpt(checkpoint::load_checkpoint_config(outcome.last_checkpoint));
  auto adamw = optim::make_optimizer({}, gpt.layout().size(), {{0, gpt.layout().size(), true}});
  const std::string message =
      message_of<std::exception>([&] { checkpoint::load_optimizer(outcome.last_checkpoint, *adamw); });
  EXPECT_NE(message.find(file.string()), std::string::npos) << message;
  EXPECT_NE(message.find("names no optimizer"), std::string::npos) << message;
}

TEST(OptimizerChoice, TheRunDirectoryNamesEachTensorsOptimizerAndDecay) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = sgd_config(dir.write("corpus.txt", generated_corpus()), 0.5, true);
  const TrainOutcome outcome = run(c, dir.path() / "run");
  std::ifstream in(dir.path() / "run" / "optimizer.json");
  const nlohmann::json json = nlohmann::json::parse(in);
  EXPECT_EQ(json.at("optimizer"), "sgd");
  EXPECT_EQ(json.at("hyperparameters").at("momentum"), 0.5);
  EXPECT_EQ(json.at("hyperparameters").at("nesterov"), 1.0);
  EXPECT_EQ(json.at("hyperparameters").at("weight_decay"), 0.1);
  model::Gpt<float> gpt(checkpoint::load_checkpoint_config(outcome.last_checkpoint));
  const auto specs = gpt.layout().tensors();
  ASSERT_EQ(json.at("tensors").size(), specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& tensor = json.at("tensors")[i];
    EXPECT_EQ(tensor.at("name"), specs[i].name);
    EXPECT_EQ(tensor.at("optimizer"), "sgd");
    EXPECT_EQ(tensor.at("decay"), specs[i].shape.size() >= 2) << specs[i].name;
  }
}

}  // namespace
}  // namespace altgrad::train
