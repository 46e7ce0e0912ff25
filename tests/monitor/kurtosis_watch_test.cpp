// The kurtosis warnings on constructed activations: a healthy forward pass raises none; outliers put
// into one block's residual stream warn at that block and step only; a GELU-like input warns only
// once its kurtosis has grown past warn_kurtosis_growth times its first value, and a watch restored
// from a checkpoint's baseline warns as the uninterrupted one does.
#include "monitor/kurtosis_watch.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "monitor/run_log.hpp"
#include "precision/quant_hooks.hpp"
#include "recipe/recipe.hpp"
#include "support/scratch_dir.hpp"

namespace altgrad::monitor {
namespace {

constexpr std::size_t kB = 2, kT = 16;

// A fp8-hybrid GPT of two blocks after one forward pass of its random initialization.
struct Forward {
  config::TrainConfig config = config::parse_config("n_layer = 2\nn_head = 2\nn_embd = 32\nblock_size = 16\n"
                                                    "[quant]\npreset = \"fp8-hybrid\"\n",
                                                    "test.toml");
  model::Gpt<float> gpt{config::gpt_config(config)};
  precision::QuantHooks hooks{gpt.matmuls(), recipe::resolve_recipe(config)};
  model::Activations<float> acts{gpt.config(), kB, kT, model::OperandCopies::allocated};

  Forward() {
    gpt.initialize(5);
    std::vector<std::int32_t> x(kB * kT), y(kB * kT);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<std::int32_t>((i * 17 + 3) % 256);
      y[i] = static_cast<std::int32_t>((i * 31 + 7) % 256);
    }
    hooks.begin_step(0, false);
    model::gpt_forward(gpt, acts, x, y, &hooks);
    hooks.end_step();
  }

  DiagnosticInputs inputs() const { return {gpt, acts, &hooks, {}}; }
};

// Every `every`-th value made `factor` times larger: a heavy tail of known weight.
void add_outliers(std::span<float> values, std::size_t every, float factor) {
  for (std::size_t i = 0; i < values.size(); i += every) values[i] *= factor;
}

// The warnings of one observe() call, as events.jsonl holds them: "kind@where@step".
std::vector<std::string> warned(KurtosisWatch& watch, const Forward& f, std::int64_t step,
                                const test_support::ScratchDir& dir) {
  static int calls = 0;  // a log of its own per call
  const std::filesystem::path log_dir = dir.path() / ("log" + std::to_string(++calls));
  {
    RunLog log(log_dir);
    Warnings warnings(log, [](const std::string&) {}, 1);
    watch.observe(f.inputs(), step, f.config, warnings);
  }
  std::vector<std::string> out;
  std::ifstream in(log_dir / "events.jsonl");
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json e = nlohmann::json::parse(line);
    out.push_back(e.at("kind").get<std::string>() + "@" + e.at("where").get<std::string>() + "@" +
                  std::to_string(e.at("step").get<std::int64_t>()));
  }
  return out;
}

TEST(KurtosisWatch, AHealthyForwardPassWarnsNowhere) {
  test_support::ScratchDir dir;
  Forward f;
  KurtosisWatch watch;
  EXPECT_EQ(warned(watch, f, 100, dir), std::vector<std::string>{});
  EXPECT_EQ(warned(watch, f, 200, dir), std::vector<std::string>{});
}

TEST(KurtosisWatch, OutliersInOneBlocksResidualStreamWarnThereAndThenOnly) {
  test_support::ScratchDir dir;
  Forward f;
  KurtosisWatch watch;
  EXPECT_EQ(warned(watch, f, 100, dir), std::vector<std::string>{});
  add_outliers(f.acts.layers[1].residual3, 100, 30.0f);
  EXPECT_EQ(warned(watch, f, 200, dir), std::vector<std::string>{"kurtosis@h.1@200"});
}

TEST(KurtosisWatch, OutliersInOneBlocksValuesWarnAtItsVPoint) {
  test_support::ScratchDir dir;
  Forward f;
  KurtosisWatch watch;
  const std::size_t C = f.gpt.config().n_embd;
  std::span<float> qkv = f.acts.layers[0].qkv;
  for (std::size_t token = 0; token < kB * kT; token += 4) qkv[token * 3 * C + 2 * C + 1] *= 40.0f;  // v, channel 1
  EXPECT_EQ(warned(watch, f, 100, dir), std::vector<std::string>{"kurtosis@h.0.attn.v@100"});
}

TEST(KurtosisWatch, AMatmulInputWarnsOnGrowthAndARestoredWatchWarnsAlike) {
  test_support::ScratchDir dir;
  Forward f;
  KurtosisWatch watch;
  EXPECT_EQ(warned(watch, f, 100, dir), std::vector<std::string>{});  // the baseline
  KurtosisWatch resumed;
  resumed.restore(watch.baseline());
  KurtosisWatch fresh;  // a run without the checkpoint's baseline takes this step as its first
  add_outliers(f.acts.layers[0].fc_act, 50, 25.0f);
  const std::vector<std::string> growth = {"kurtosis_growth@h.0.mlp.c_proj:act@300"};
  EXPECT_EQ(warned(watch, f, 300, dir), growth);
  EXPECT_EQ(warned(resumed, f, 300, dir), growth);
  EXPECT_EQ(warned(fresh, f, 300, dir), std::vector<std::string>{});
}

}  // namespace
}  // namespace altgrad::monitor
