// From a config to a dataset: the configured corpus, or the default one under the repository root;
// the block size and validation fraction come from the config.
#include "train/training_data.hpp"

#include <gtest/gtest.h>

#include <string>

#include "support/error_message.hpp"
#include "support/scratch_dir.hpp"

namespace {

using altgrad::data::DataError;
using altgrad::train::load_training_data;
using altgrad::data::Split;
using altgrad::config::TrainConfig;
using altgrad::test_support::mentions;
using altgrad::test_support::message_of;
using altgrad::test_support::ScratchDir;

std::string text_of(std::span<const std::uint8_t> bytes) { return {bytes.begin(), bytes.end()}; }

TEST(TrainingData, LoadsTheConfiguredCorpusAndSplitsIt) {
  ScratchDir dir;
  dir.write("books/a.txt", std::string(30, 'a'));
  dir.write("books/b.txt", std::string(9, 'b'));  // 30 + "\n" + 9 = 40 bytes
  TrainConfig config;
  config.data = (dir.path() / "books").string();
  config.block_size = 8;
  config.val_fraction = 0.25;
  const auto data = load_training_data(config, "/nonexistent-root");
  EXPECT_EQ(text_of(data.split(Split::train)), std::string(30, 'a'));
  EXPECT_EQ(text_of(data.split(Split::val)), "\n" + std::string(9, 'b'));
  EXPECT_EQ(data.options().seed, config.seed);
}

TEST(TrainingData, EmptyDataMeansTheDefaultCorpusUnderTheRoot) {
  ScratchDir root;
  root.write("data/legal-corpus.txt", std::string(900, 'x') + std::string(100, 'y'));
  TrainConfig config;
  config.block_size = 16;
  const auto data = load_training_data(config, root.path());
  EXPECT_EQ(text_of(data.split(Split::val)), std::string(100, 'y'));
  const auto missing = message_of<DataError>([&] { load_training_data(config, root.path() / "elsewhere"); });
  EXPECT_TRUE(mentions(missing, {"elsewhere/data/legal-corpus.txt", "no such file"}));
}

TEST(TrainingData, CorpusTooShortForTheBlockSizeNamesBoth) {
  ScratchDir dir;
  TrainConfig config;
  config.data = dir.write("short.txt", std::string(500, 'z')).string();  // 50 validation bytes
  config.block_size = 128;
  EXPECT_TRUE(mentions(message_of<DataError>([&] { load_training_data(config, dir.path()); }),
                       {"short.txt", "block_size = 128", "50", "130"}));
}

}  // namespace
