// Runs that share a seed share initial weights and data order, whatever recipe, optimizer or
// learning rate they differ in: the trainer initializes from config.seed alone and draws batch
// (step, micro) from the seed's stream (docs/determinism.md, docs/quantization.md "Random streams").
// Checked on the configs a sweep generates, through the same calls the trainer makes.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "data/byte_dataset.hpp"
#include "model/gpt.hpp"
#include "sweep/sweep_test_support.hpp"
#include "train/trainer.hpp"
#include "train/training_data.hpp"

namespace altgrad::sweep {
namespace {

using test_support::ScratchDir;

std::vector<float> initial_weights(const config::TrainConfig& config) {
  model::Gpt<float> gpt(config::gpt_config(config));
  gpt.initialize(config.seed);
  return {gpt.parameters().begin(), gpt.parameters().end()};
}

std::vector<std::int32_t> first_batches(const config::TrainConfig& config, const std::filesystem::path& root) {
  const data::ByteDataset data = train::load_training_data(config, root);
  const std::size_t n = static_cast<std::size_t>(config.batch_size * config.block_size);
  std::vector<std::int32_t> all, x(n), y(n);
  for (std::uint64_t step = 0; step < 3; ++step) {
    data.get_batch(data::BatchKey::training(step, 0), config.batch_size, config.block_size, x, y);
    all.insert(all.end(), x.begin(), x.end());
  }
  return all;
}

TEST(SharedSeeds, RunsWithOneSeedStartFromTheSameWeightsAndBatches) {
  ScratchDir dir;
  std::string corpus;
  for (int i = 0; i < 400; ++i) corpus += "line " + std::to_string(i * 7919 % 1000) + " of a small corpus\n";
  dir.write("corpus.txt", corpus);
  const std::string sweep = R"(
[base]
n_layer = 1
n_head = 2
n_embd = 16
block_size = 8
batch_size = 2
data = ")" + (dir.path() / "corpus.txt").string() + R"("

[recipes.fp32]
quant.preset = "fp32"
[recipes.e3m4]
quant.preset = "fp8-hybrid"
quant.act.format = "e3m4"
quant.weight.format = "e3m4"
[recipes.bf16-sgd]
quant.preset = "bf16"
optimizer = "sgd"

[axes]
recipe = ["fp32", "e3m4", "bf16-sgd"]
seed = [1, 2]
learning_rate = [1e-3, 3e-3]
)";
  const auto planned = expand(load_sweep(dir.write("sweep.toml", sweep)));
  ASSERT_EQ(planned.size(), 12u);
  std::map<std::uint64_t, std::pair<std::vector<float>, std::vector<std::int32_t>>> first_of_seed;
  for (const PlannedRun& run : planned) {
    const auto weights = initial_weights(run.config);
    const auto batches = first_batches(run.config, ALTGRAD_SOURCE_DIR);
    const auto [found, inserted] = first_of_seed.emplace(run.config.seed, std::make_pair(weights, batches));
    if (inserted) continue;
    EXPECT_EQ(weights, found->second.first) << run.name;
    EXPECT_EQ(batches, found->second.second) << run.name;
  }
  ASSERT_EQ(first_of_seed.size(), 2u);
  // And the seed does matter: otherwise the equalities above would hold for any sweep.
  EXPECT_NE(first_of_seed[1].first, first_of_seed[2].first);
  EXPECT_NE(first_of_seed[1].second, first_of_seed[2].second);
}

}  // namespace
}  // namespace altgrad::sweep
