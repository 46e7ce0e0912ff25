// Training with an NVFP4-like recipe whose weight-gradient GEMMs take Transformer Engine's 16-point
// random Hadamard transform (docs/quantization.md, "Hadamard transforms"): the run completes, its
// recipe.json records the element, and each logged step's metrics say what the transform did to
// each wgrad operand, and nothing for the GEMMs it leaves alone.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "support/scratch_dir.hpp"
#include "support/text_file.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

constexpr const char* kNvfp4Wgrad = R"([quant.act]
format = "e2m1"
scaling = "block"
block = 16
scale_format = "e4m3"
[quant.weight]
format = "e2m1"
scaling = "block"
block = 16
scale_format = "e4m3"
[quant.grad]
format = "e2m1"
scaling = "block"
block = 16
scale_format = "e4m3"
rounding = "stochastic"
[quant.hadamard]
gemms = ["wgrad"]
size = 16
signs = "te"
)";

TEST(HadamardTraining, Nvfp4WithWgradHadamardLogsWhatTheTransformDid) {
  test_support::ScratchDir dir;
  config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  c.quant = config::parse_config(kNvfp4Wgrad, "test.toml").quant;
  c.max_iters = 4;
  c.lr_decay_iters = 4;
  c.log_interval = 2;
  c.eval_interval = 4;
  EXPECT_EQ(run(c, dir.path() / "run").stop_reason, "completed");

  const nlohmann::json recipe = nlohmann::json::parse(test_support::read_text(dir.path() / "run" / "recipe.json"));
  EXPECT_EQ(recipe.at("hadamard").at("gemms"), nlohmann::json::array({"wgrad"}));
  EXPECT_EQ(recipe.at("hadamard").at("signs"), "te");

  const auto lines = json_lines(dir.path() / "run" / "metrics.jsonl");
  ASSERT_EQ(lines.size(), 2u);  // steps 2 and 4
  for (const nlohmann::json& line : lines) {
    EXPECT_TRUE(std::isfinite(line.at("loss").get<double>()));
    const nlohmann::json& quant = line.at("quant");
    for (const char* point : {"h.0.mlp.c_fc:act", "h.0.mlp.c_fc:grad", "h.1.attn.c_proj:act", "h.1.attn.c_proj:grad"}) {
      const nlohmann::json& hadamard = quant.at(point).at("hadamard");
      EXPECT_EQ(hadamard.size(), 1u) << point;  // wgrad's copy only
      const nlohmann::json& wgrad = hadamard.at("wgrad");
      for (const char* key : {"amax_before", "amax_after", "kurtosis_before", "kurtosis_after", "rel_error"}) {
        ASSERT_TRUE(wgrad.contains(key) && wgrad.at(key).is_number()) << point << " " << key;
      }
      EXPECT_GT(wgrad.at("amax_before").get<double>(), 0.0) << point;
      EXPECT_GT(wgrad.at("rel_error").get<double>(), 0.0) << point;
      EXPECT_LT(wgrad.at("rel_error").get<double>(), 1.0) << point;
      // The rotation spreads each token group's largest value: amax·4 (= √16) bounds it after.
      EXPECT_LE(wgrad.at("amax_after").get<double>(), 4.0 * wgrad.at("amax_before").get<double>()) << point;
    }
    EXPECT_FALSE(quant.at("h.0.mlp.c_fc:weight").contains("hadamard"));  // W is read by forward and dgrad
    EXPECT_FALSE(quant.contains("lm_head:act"));                          // the LM head is neither on nor selected
  }
}

}  // namespace
}  // namespace altgrad::train
