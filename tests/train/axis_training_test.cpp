// Whole-axis blocks (block = "axis") on a Linear wider than the MX kernels' blocks: c_proj's 1,152
// inputs. The run trains through its diagnostic steps, whose step geometry measures the weights
// against E8M0 blocks of 1,024 standing in for the rows; a bit-space optimizer, which would step
// on those blocks, refuses them by name.
#include <gtest/gtest.h>

#include <string>

#include "config/config.hpp"
#include "support/error_message.hpp"
#include "support/scratch_dir.hpp"
#include "train/training_run.hpp"

namespace altgrad::train::axis_training_test {
namespace {

using namespace train_test;

config::TrainConfig wide_axis(const fs::path& corpus) {
  config::TrainConfig c = tiny_config(corpus);
  c.n_embd = 288;  // the MLP's c_proj reads 4 · 288 = 1,152 inputs
  c.max_iters = 2;
  c.diag_interval = 2;
  c.quant = config::parse_config("[quant]\npreset = \"mx8\"\n[quant.weight]\nblock = \"axis\"\n", "test.toml").quant;
  return c;
}

TEST(AxisTraining, TrainsThroughTheStepGeometryOfRowsLongerThanABlock) {
  test_support::ScratchDir dir;
  const TrainOutcome outcome = run(wide_axis(dir.write("corpus.txt", generated_corpus())), dir.path() / "run");
  EXPECT_EQ(outcome.stop_reason, "completed");
}

TEST(AxisTraining, BitSpaceOptimizersRefuseWholeRowsLongerThanABlock) {
  test_support::ScratchDir dir;
  config::TrainConfig c = wide_axis(dir.write("corpus.txt", generated_corpus()));
  c.optimizer = config::OptimizerKind::gridwalk;
  EXPECT_TRUE(test_support::mentions(
      test_support::message_of<std::exception>([&] { (void)run(c, dir.path() / "run"); }),
      {"block = \"axis\" over 1152 inputs"}));
}

}  // namespace
}  // namespace altgrad::train::axis_training_test
