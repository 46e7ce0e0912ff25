// A run with 2-D tiles on the weights (tile = true; quant/tiles.hpp): it trains, each weight is
// quantized once per pass (no column-wise copy: W and Wᵀ share the tiles) while activations and
// gradients keep their MX copies along each GEMM's axis, and resume continues bit for bit. A
// bit-space optimizer, whose grids are 1-D, refuses tiles by name.
#include <gtest/gtest.h>

#include <string>

#include "support/scratch_dir.hpp"
#include "train/same_run_check.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

config::TrainConfig tiled(const fs::path& corpus) {
  config::TrainConfig c = tiny_config(corpus);
  c.quant = config::parse_config("[quant]\npreset = \"mx8\"\n[quant.weight]\nblock = 16\ntile = true\n", "test.toml").quant;
  c.max_iters = 6;
  return c;
}

TEST(TilesTraining, WeightsAreQuantizedOncePerPassAndResumeIsExact) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = tiled(dir.write("corpus.txt", generated_corpus()));
  const TrainOutcome outcome = run(c, dir.path() / "run");
  ASSERT_EQ(outcome.stop_reason, "completed");
  const nlohmann::json quant = json_lines(dir.path() / "run" / "metrics.jsonl").back().at("quant");
  EXPECT_FALSE(quant.at("h.0.mlp.c_fc:weight").contains("colwise")) << quant.at("h.0.mlp.c_fc:weight");
  EXPECT_TRUE(quant.at("h.0.mlp.c_fc:weight").contains("clipped_blocks_pct"));
  EXPECT_TRUE(quant.at("h.0.mlp.c_fc:act").contains("colwise"));
  ASSERT_TRUE(run_interrupted(c, dir.path() / "resumed", 3).interrupted);
  ASSERT_EQ(run(c, dir.path() / "resumed", true).stop_reason, "completed");
  expect_same_run(dir.path() / "run", dir.path() / "resumed");
}

TEST(TilesTraining, BitSpaceOptimizersRefuseTiles) {
  test_support::ScratchDir dir;
  config::TrainConfig c = tiled(dir.write("corpus.txt", generated_corpus()));
  c.optimizer = config::OptimizerKind::gridwalk;
  try {
    (void)run(c, dir.path() / "run");
    FAIL() << "gridwalk ran on tiled weights";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("tile = true"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace altgrad::train
