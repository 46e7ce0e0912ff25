// config.json and state.json of a checkpoint, written by hand: every number read as an integer must
// be written as one and fit its field, and state.json's values must be ones a run can resume from.
// Found by fuzz/checkpoint_fuzzer.cpp (fuzz/corpus/checkpoint/regress_*): 1e300 read as an integer
// was undefined behaviour, and a negative step or gradient norm was accepted.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "checkpoint/checkpoint.hpp"
#include "support/error_message.hpp"
#include "support/scratch_dir.hpp"

namespace altgrad::checkpoint {
namespace {

using test_support::mentions;
using test_support::message_of;

const std::string kConfig =
    R"({"block_size": 8, "vocab_size": 256, "n_layer": 1, "n_head": 2, "n_embd": 8, "dropout": 0.0, "bias": false})";
const std::string kState =
    R"({"step": 4, "seed": 1337, "val_loss": 5.5, "best_val_loss": 5.5, "best_step": 4, "grad_norm_history": [0.5, 1.25],)"
    R"( "last_loss": null, "initial_loss": null})";

// kConfig or kState with `from` replaced by `to`.
std::string with(const std::string& json, const std::string& from, const std::string& to) {
  const auto at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return json.substr(0, at) + to + json.substr(at + from.size());
}

TEST(CheckpointJson, HandWrittenFilesLoad) {
  test_support::ScratchDir dir;
  dir.write("config.json", kConfig);
  dir.write("state.json", kState);
  const model::GptConfig c = checkpoint::load_checkpoint_config(dir.path());
  EXPECT_EQ(c.n_layer, 1u);
  EXPECT_EQ(c.n_embd, 8u);
  const checkpoint::CheckpointState s = checkpoint::load_state(dir.path());
  EXPECT_EQ(s.step, 4);
  EXPECT_EQ(s.seed, 1337u);
  EXPECT_EQ(s.grad_norm_history, (std::vector<double>{0.5, 1.25}));
  EXPECT_TRUE(std::isnan(s.last_loss));
  EXPECT_TRUE(s.kurtosis_baseline.empty());  // absent before a run's first diagnostic step
  dir.write("state.json", with(kState, "\"initial_loss\": null", "\"initial_loss\": null, \"kurtosis_baseline\": {\"lm_head:act\": 2.5}"));
  EXPECT_EQ(checkpoint::load_state(dir.path()).kurtosis_baseline, (std::map<std::string, double>{{"lm_head:act", 2.5}}));
}

TEST(CheckpointJson, ConfigIntegersMustBeIntegersInRange) {
  for (const std::string bad : {"1e300", "1.5", "-1", "\"1\"", "18446744073709551616"}) {
    test_support::ScratchDir dir;
    const auto file = dir.write("config.json", with(kConfig, "\"n_layer\": 1", "\"n_layer\": " + bad));
    EXPECT_TRUE(mentions(message_of<io::CheckpointError>([&] { checkpoint::load_checkpoint_config(dir.path()); }),
                         {file.string() + ": ", "n_layer"}))
        << bad;
  }
}

TEST(CheckpointJson, StateValuesARunCannotResumeFromAreRefused) {
  const struct {
    std::string from, to, named;
  } cases[] = {
      {"\"step\": 4", "\"step\": -3", "step"},
      {"\"step\": 4", "\"step\": 1e300", "step"},
      {"\"seed\": 1337", "\"seed\": -1", "seed"},
      {"\"best_step\": 4", "\"best_step\": -2", "best_step"},
      {"[0.5, 1.25]", "[0.5, -1.0]", "grad_norm_history"},
      {"\"initial_loss\": null", "\"initial_loss\": null, \"kurtosis_baseline\": {\"h.0.mlp.c_proj:act\": -2}",
       "kurtosis_baseline.h.0.mlp.c_proj:act"},
      {"\"initial_loss\": null", "\"initial_loss\": null, \"kurtosis_baseline\": [7.5]", "kurtosis_baseline"},
  };
  for (const auto& c : cases) {
    test_support::ScratchDir dir;
    const auto file = dir.write("state.json", with(kState, c.from, c.to));
    EXPECT_TRUE(mentions(message_of<io::CheckpointError>([&] { checkpoint::load_state(dir.path()); }),
                         {file.string() + ": ", c.named}))
        << c.to;
  }
}

// Every field is required: checkpoints written before stop_loss_multiple existed lack initial_loss.
TEST(CheckpointJson, AMissingFieldIsRefusedByName) {
  test_support::ScratchDir dir;
  const auto file = dir.write("state.json", with(kState, ", \"initial_loss\": null", ""));
  EXPECT_TRUE(mentions(message_of<io::CheckpointError>([&] { checkpoint::load_state(dir.path()); }),
                       {file.string(), "initial_loss"}));
}

TEST(CheckpointJson, AFileThatIsNotAnObjectIsRefused) {
  test_support::ScratchDir dir;
  const auto file = dir.write("state.json", "[1, 2]");
  EXPECT_TRUE(mentions(message_of<io::CheckpointError>([&] { checkpoint::load_state(dir.path()); }),
                       {file.string(), "not a JSON object"}));
}

}  // namespace
}  // namespace altgrad::checkpoint
