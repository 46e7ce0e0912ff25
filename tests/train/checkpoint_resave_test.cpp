// A checkpoint the trainer wrote, loaded as `train --resume` loads it and saved again, gives the
// same bytes in every file. The checkpoint fuzz target checks that any checkpoint that loads
// re-saves to a fixed point; this checks the stronger form for real runs: with delayed scaling (so
// quant.safetensors and recipe.json are there) and with each optimizer.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "checkpoint/checkpoint.hpp"
#include "checkpoint/quant_checkpoint.hpp"
#include "model/gpt.hpp"
#include "optim/make_optimizer.hpp"
#include "precision/quant_hooks.hpp"
#include "support/scratch_dir.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

std::set<std::string> file_names(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

// Loads `from` as a resumed run does and saves it under run_dir; returns the new checkpoint.
fs::path load_and_save(const fs::path& from, const fs::path& run_dir, optim::OptimizerKind kind) {
  model::Gpt<float> model(checkpoint::load_checkpoint_config(from));
  checkpoint::load_model(from, model);
  optim::OptimizerSpec spec;
  spec.kind = kind;
  const std::size_t n = model.layout().size();
  const auto optimizer = optim::make_optimizer(spec, n, {optim::ParameterRange{0, n, true}});
  checkpoint::load_optimizer(from, *optimizer);
  const checkpoint::CheckpointState state = checkpoint::load_state(from);
  const std::optional<recipe::Recipe> recipe = checkpoint::load_checkpoint_recipe(from, model.matmuls());
  EXPECT_TRUE(recipe && recipe->any_enabled());
  precision::QuantHooks hooks(model.matmuls(), *recipe);
  checkpoint::load_quant_state(from, hooks);
  return checkpoint::save_checkpoint(run_dir, model, *optimizer, state,
                                     [&](const fs::path& dir) { checkpoint::save_quant_state(dir, *recipe, &hooks); });
}

TEST(CheckpointResave, ALoadedCheckpointSavesToTheSameBytes) {
  for (const auto kind : {optim::OptimizerKind::adamw, optim::OptimizerKind::sgd}) {
    test_support::ScratchDir dir;
    config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
    c.optimizer = kind;
    c.quant = config::parse_config("[quant]\npreset = \"fp8-hybrid\"\n", "quant.toml").quant;
    const fs::path written = run(c, dir.path() / "run").last_checkpoint;
    ASSERT_TRUE(fs::exists(written / "quant.safetensors"));

    const fs::path again = load_and_save(written, dir.path() / "again", kind);
    EXPECT_EQ(file_names(again), file_names(written));
    for (const auto& name : file_names(written)) {
      EXPECT_EQ(bytes_of(again / name), bytes_of(written / name)) << name << ", optimizer " << static_cast<int>(kind);
    }
  }
}

}  // namespace
}  // namespace altgrad::train
