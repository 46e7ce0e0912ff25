// A run with 2-D tiles on the weights (tile = true; quant/tiles.hpp): it trains, each weight is
// quantized once per pass (no column-wise copy: W and Wᵀ share the tiles), its logged error is the
// tile quantizer's on the weights of that step, activations and gradients keep their MX copies
// along each GEMM's axis, and resume continues bit for bit. A bit-space optimizer, whose grids are
// 1-D, refuses tiles by name.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "format/parse.hpp"
#include "io/safetensors.hpp"
#include "quant/tiles.hpp"
#include "support/error_message.hpp"
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

// ‖w − ŵ‖ / ‖w‖ in double, as metrics.jsonl's rel_error is defined.
double relative_error(const std::vector<float>& w, const std::vector<float>& q) {
  double error = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    error += (static_cast<double>(w[i]) - q[i]) * (static_cast<double>(w[i]) - q[i]);
    norm += static_cast<double>(w[i]) * w[i];
  }
  return std::sqrt(error / norm);
}

// Step 5 quantizes the weights that step 4's checkpoint holds: its logged error for c_fc's weight
// (128 × 32, E4M3 in 16 × 16 tiles with E8M0 scales) is the tile quantizer's, which 1-D blocks of
// 16 along the rows do not give.
TEST(TilesTraining, LoggedWeightErrorIsTheTileQuantizers) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = tiled(dir.write("corpus.txt", generated_corpus()));
  ASSERT_EQ(run(c, dir.path() / "run").stop_reason, "completed");
  const io::Tensor w = io::read_safetensors(dir.path() / "run/checkpoints/step_4/model.safetensors")
                           .tensors.at("transformer.h.0.mlp.c_fc.weight");
  ASSERT_EQ(w.shape, (std::vector<std::int64_t>{128, 32}));
  const format::Format e4m3 = format::make_format(format::parse_format("e4m3"));
  quant::MxOptions o;
  o.block_size = 16;
  std::vector<float> tiles(w.data.size()), rows(w.data.size());
  quant::quantize_tiles(e4m3, w.data, tiles, 32, o);
  quant::quantize_mx(e4m3, w.data, rows, 32, o);
  const double logged = json_lines(dir.path() / "run" / "metrics.jsonl")
                            .at(4)
                            .at("quant")
                            .at("h.0.mlp.c_fc:weight")
                            .at("rel_error")
                            .get<double>();
  EXPECT_NEAR(logged, relative_error(w.data, tiles), 1e-12 * logged);
  EXPECT_GT(std::fabs(relative_error(w.data, rows) - relative_error(w.data, tiles)), 1e-6 * logged);
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
  EXPECT_TRUE(test_support::mentions(
      test_support::message_of<std::exception>([&] { (void)run(c, dir.path() / "run"); }), {"tile = true"}));
}

}  // namespace
}  // namespace altgrad::train
