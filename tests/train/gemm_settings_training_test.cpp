// A run with per-GEMM settings (torchao's high-precision weight gradient, and W's dgrad copy in
// MXFP4): it trains, recipe.json holds the GEMMs' own settings, metrics.jsonl gives each own copy's
// statistics under its GEMM's name and leaves the point's keys to its other copies, and resume
// continues bit for bit.
#include <gtest/gtest.h>

#include <string>

#include "support/scratch_dir.hpp"
#include "support/text_file.hpp"
#include "train/same_run_check.hpp"
#include "train/training_run.hpp"

namespace altgrad::train::gemm_settings_training_test {
namespace {

using namespace train_test;

config::TrainConfig per_gemm(const fs::path& corpus) {
  config::TrainConfig c = tiny_config(corpus);
  c.quant = config::parse_config(
                "[quant]\npreset = \"te-current\"\n"
                "[[quant.override]]\nmatch = \"*\"\ngemm = \"wgrad\"\nenabled = false\n"
                "[[quant.override]]\nmatch = \"*:weight\"\ngemm = \"dgrad\"\nformat = \"e2m1\"\nscaling = \"block\"\n",
                "test.toml")
                .quant;
  c.max_iters = 6;
  return c;
}

TEST(GemmSettingsTraining, LogsEachOwnCopyAndResumesExactly) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = per_gemm(dir.write("corpus.txt", generated_corpus()));
  ASSERT_EQ(run(c, dir.path() / "run").stop_reason, "completed");
  const nlohmann::json recipe = nlohmann::json::parse(test_support::read_text(dir.path() / "run" / "recipe.json"));
  EXPECT_EQ(recipe.at("points").at(1).at("gemms").at("dgrad").at("format"), "e2m1");
  EXPECT_EQ(recipe.at("points").at(0).at("gemms").at("wgrad").at("enabled"), false);

  const nlohmann::json quant = json_lines(dir.path() / "run" / "metrics.jsonl").back().at("quant");
  const nlohmann::json& w = quant.at("h.0.mlp.c_fc:weight");
  EXPECT_TRUE(w.contains("dgrad")) << w;
  EXPECT_TRUE(w.at("dgrad").contains("clipped_blocks_pct")) << w;  // MX blocks in its dgrad copy only
  EXPECT_FALSE(w.contains("clipped_blocks_pct")) << w;
  EXPECT_FALSE(w.contains("colwise")) << w;
  // X and dY: their wgrad copies are unquantized, so no statistics under wgrad.
  EXPECT_FALSE(quant.at("h.0.mlp.c_fc:act").contains("wgrad"));
  EXPECT_GT(quant.at("h.0.mlp.c_fc:act").at("rel_error").get<double>(), 0.0);

  ASSERT_TRUE(run_interrupted(c, dir.path() / "resumed", 3).interrupted);
  ASSERT_EQ(run(c, dir.path() / "resumed", true).stop_reason, "completed");
  expect_same_run(dir.path() / "run", dir.path() / "resumed");
}

}  // namespace
}  // namespace altgrad::train::gemm_settings_training_test
