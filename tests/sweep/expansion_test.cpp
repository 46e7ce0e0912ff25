// Sweep files → runs: the product, the explicit list, names and groups, and errors that name the
// file, line, key and value before anything runs.
#include <gtest/gtest.h>

#include "sweep/expansion.hpp"
#include "sweep/threshold_search.hpp"
#include "sweep_test_support.hpp"

namespace altgrad::sweep {
namespace {

using sweep_test::expand_text;
using sweep_test::expansion_error;
using sweep_test::names_of;
using test_support::ScratchDir;

const char* const kRecipes = R"(
[recipes.fp32]
quant.preset = "fp32"

[recipes.e3m4]
quant.preset = "fp8-hybrid"
quant.act.format = "e3m4"
quant.weight.format = "e3m4"
)";

TEST(SweepExpansion, AxesMakeTheFullProductLastAxisFastest) {
  ScratchDir dir;
  const auto runs = expand_text(dir, std::string("base = \"base.toml\"\n") + kRecipes + R"(
[axes]
recipe = ["fp32", "e3m4"]
seed = [1, 2]
learning_rate = [1e-3, 3e-4]
)");
  const std::vector<std::string> expected = {
      "fp32.seed1.lr1e-3", "fp32.seed1.lr3e-4", "fp32.seed2.lr1e-3", "fp32.seed2.lr3e-4",
      "e3m4.seed1.lr1e-3", "e3m4.seed1.lr3e-4", "e3m4.seed2.lr1e-3", "e3m4.seed2.lr3e-4"};
  EXPECT_EQ(names_of(runs), expected);
  // Every run's config is the base plus exactly its choices.
  for (const PlannedRun& run : runs) {
    EXPECT_EQ(run.config.n_embd, 16) << run.name;
    EXPECT_EQ(run.config.seed, run.name.find("seed1") != std::string::npos ? 1u : 2u) << run.name;
    EXPECT_EQ(run.config.learning_rate, run.name.ends_with("lr1e-3") ? 1e-3 : 3e-4) << run.name;
    EXPECT_EQ(run.config.quant.empty() || run.config.quant.table()["preset"].value_or(std::string()) == "fp32",
              run.name.starts_with("fp32"))
        << run.name;
  }
  EXPECT_EQ(runs[4].group, "e3m4.lr1e-3");
  EXPECT_EQ(runs[6].group, "e3m4.lr1e-3");  // seeds 1 and 2 of one group
  EXPECT_EQ(runs[4].config.quant.table()["act"]["format"].value_or(std::string()), "e3m4");
  EXPECT_EQ(settings_json(runs[5].settings),
            nlohmann::json::parse(R"({"quant.preset": "fp8-hybrid", "quant.act.format": "e3m4",
                                      "quant.weight.format": "e3m4", "seed": 1, "learning_rate": 3e-4})"));
}

TEST(SweepExpansion, AListedRunIsCrossedWithTheAxesAndNamedByWhatItSets) {
  ScratchDir dir;
  const auto runs = expand_text(dir, std::string("base = \"base.toml\"\n") + kRecipes + R"(
[[runs]]
recipe = "fp32"

[[runs]]
recipe = "e3m4"
optimizer = "sgd"
learning_rate = 0.05

[[runs]]
name = "wide"
n_embd = 32

[[runs]]
quant.preset = "bf16"

[axes]
seed = [7]
)");
  EXPECT_EQ(names_of(runs), (std::vector<std::string>{"fp32.seed7", "e3m4.optimizer-sgd.lr0.05.seed7", "wide.seed7",
                                                      "preset-bf16.seed7"}));
  EXPECT_EQ(runs[3].config.quant.table()["preset"].value_or(std::string()), "bf16");
  EXPECT_EQ(runs[1].config.optimizer, config::OptimizerKind::sgd);
  EXPECT_EQ(runs[1].config.learning_rate, 0.05);
  EXPECT_EQ(runs[2].config.n_embd, 32);
  EXPECT_EQ(runs[2].group, "wide");
}

TEST(SweepExpansion, AnInlineBaseAndNestedQuantAxes) {
  ScratchDir dir;
  const auto runs = expand_text(dir, std::string("[base]\n") + sweep_test::kSmallBase + R"(
[base.quant]
preset = "fp8-hybrid"

[axes]
"quant.grad.format" = ["e5m2", "e4m3"]
quant.grad.rounding = ["nearest", "stochastic"]
)");
  EXPECT_EQ(names_of(runs), (std::vector<std::string>{"format-e5m2.rounding-nearest", "format-e5m2.rounding-stochastic",
                                                      "format-e4m3.rounding-nearest", "format-e4m3.rounding-stochastic"}));
  EXPECT_EQ(runs[3].config.quant.table()["grad"]["rounding"].value_or(std::string()), "stochastic");
  EXPECT_EQ(runs[3].config.quant.table()["preset"].value_or(std::string()), "fp8-hybrid");
}

TEST(SweepExpansion, SetChangesTheBaseForEveryRunWithoutNamingIt) {
  ScratchDir dir;
  const auto runs = expand_text(dir, "base = \"base.toml\"\n[set]\nmax_iters = 9\nlr_decay_iters = 9\n[axes]\nseed = [1, 2]\n");
  ASSERT_EQ(names_of(runs), (std::vector<std::string>{"seed1", "seed2"}));
  EXPECT_EQ(runs[1].config.max_iters, 9);
  EXPECT_EQ(runs[1].config.n_embd, 16);  // from base.toml
  EXPECT_EQ(settings_json(runs[1].settings), nlohmann::json::parse(R"({"seed": 2})"));
  EXPECT_EQ(runs[1].group, "base");
}

TEST(SweepExpansion, NoDimensionsIsOneRunNamedBase) {
  ScratchDir dir;
  const auto runs = expand_text(dir, "base = \"base.toml\"\n");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].name, "base");
}

TEST(SweepExpansion, CollidingNamesAreAnError) {
  ScratchDir dir;
  const std::string error = expansion_error(dir, R"(base = "base.toml"
[[runs]]
name = "a"
n_embd = 32
[[runs]]
name = "a"
n_embd = 64
)");
  EXPECT_NE(error.find("two runs are both named 'a'"), std::string::npos) << error;
  EXPECT_NE(error.find("\"n_embd\":64"), std::string::npos) << error;
}

TEST(SweepExpansion, BadValuesNameTheSweepFileLineKeyAndValue) {
  ScratchDir dir;
  std::string error = expansion_error(dir, R"(base = "base.toml"
[axes]
seed = [1]
learning_rate = [1e-3, -2.0]
)");
  EXPECT_NE(error.find("sweep.toml:4: learning_rate = -2.0 is not allowed"), std::string::npos) << error;

  error = expansion_error(dir, "base = \"base.toml\"\n[axes]\nlearnig_rate = [1e-3]\n");
  EXPECT_NE(error.find("sweep.toml:3: unknown key 'learnig_rate' (did you mean 'learning_rate'?)"), std::string::npos)
      << error;

  error = expansion_error(dir, "base = \"base.toml\"\n\n[axes]\nn_head = [3]\n");  // 16 channels, 3 heads
  EXPECT_NE(error.find("sweep.toml:4"), std::string::npos) << error;
  EXPECT_NE(error.find("n_embd = 16 and n_head = 3 break a rule"), std::string::npos) << error;
  EXPECT_NE(error.find("base.toml:3"), std::string::npos) << error;  // where n_embd came from

  error = expansion_error(dir, R"(base = "base.toml"
[recipes.odd]
quant.preset = "fp8-hybrid"
quant.act.format = "e9m9"
[axes]
recipe = ["odd"]
)");
  EXPECT_NE(error.find("sweep.toml:4"), std::string::npos) << error;
  EXPECT_NE(error.find("e9m9"), std::string::npos) << error;
  EXPECT_NE(error.find("run 'odd'"), std::string::npos) << error;
}

TEST(SweepExpansion, MistakesInTheSweepFileItselfAreNamed) {
  ScratchDir dir;
  EXPECT_NE(expansion_error(dir, "base = \"base.toml\"\n[axis]\nseed = [1]\n")
                .find("sweep.toml:2: unknown key 'axis' in the sweep file (did you mean 'axes'?)"),
            std::string::npos);
  EXPECT_NE(expansion_error(dir, "base = \"base.toml\"\n[axes]\nseed = []\n")
                .find("sweep.toml:3: axes.seed must be a non-empty array"),
            std::string::npos);
  EXPECT_NE(expansion_error(dir, "base = \"missing.toml\"\n").find("sweep.toml:1: base = \"missing.toml\": cannot read"),
            std::string::npos);
  EXPECT_NE(expansion_error(dir, "base = \"base.toml\"\n[axes]\nrecipe = [\"nope\"]\n")
                .find("sweep.toml:3: recipe = \"nope\" names no [recipes.nope] table"),
            std::string::npos);
  EXPECT_NE(expansion_error(dir, "base = \"base.toml\"\n[search]\nkind = \"lr_threshold\"\nlow = 1e-3\nhigh = 1e-4\nsteps = 5\n")
                .find("search needs 0 < low < high"),
            std::string::npos);
  EXPECT_NE(expansion_error(dir, "base = \"base.toml\"\n[search]\nkind = \"lr_threshold\"\nlow = 1e-4\nhigh = 1e-2\nstep = 5\n")
                .find("sweep.toml:6: unknown key 'step' in [search] (did you mean 'steps'?)"),
            std::string::npos);
}

TEST(SweepExpansion, ASearchMaySearchEachSeedApart) {
  ScratchDir dir;
  dir.write("base.toml", sweep_test::kSmallBase);
  const SweepSpec spec = load_sweep(dir.write("sweep.toml", R"(base = "base.toml"
[axes]
seed = [1, 2]
[search]
kind = "lr_threshold"
low = 1e-3
high = 1e-1
steps = 5
)"));
  const auto runs = expand(spec);
  ASSERT_EQ(runs.size(), 2u);
  ThresholdSearch second(spec, runs[1]);
  const PlannedRun* probe = second.next();
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->name, "seed2.lr-probe1");  // named after the searched run, so the seeds' probes differ
  EXPECT_EQ(probe->config.seed, 2u);
  EXPECT_EQ(probe->config.learning_rate, 1e-3);
  EXPECT_EQ(second.record().seed, 2);
  EXPECT_EQ(second.record().group, runs[1].group);
}

TEST(SweepExpansion, BothEndsOfASearchMustMakeValidConfigs) {
  ScratchDir dir;
  // min_lr defaults to 1e-4: a probe at 1e-5 would break min_lr <= learning_rate.
  const std::string error = expansion_error(dir, R"(base = "base.toml"
[search]
kind = "lr_threshold"
low = 1e-5
high = 1e-2
steps = 5
)");
  EXPECT_NE(error.find("min_lr = 1e-04 and learning_rate = 1e-05 break a rule"), std::string::npos) << error;
  EXPECT_NE(error.find("sweep.toml:2"), std::string::npos) << error;
}

const char* const kWarmStart = R"(
[recipes.pre]
quant.preset = "bf16"

[recipes.ft]
init_from = "@pre"
quant.preset = "fp8-hybrid"
)";

TEST(SweepExpansion, InitFromAGroupNamesTheRunOfTheSameSeed) {
  ScratchDir dir;
  const auto runs = expand_text(dir, std::string("base = \"base.toml\"\n") + kWarmStart + R"(
[axes]
recipe = ["ft", "pre"]
seed = [1, 2]
)");
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].name, "ft.seed1");
  EXPECT_EQ(runs[0].source, "pre.seed1");
  EXPECT_EQ(runs[1].source, "pre.seed2");
  EXPECT_EQ(runs[2].source, "");
  EXPECT_EQ(source_dir("/sweeps/x", runs[1]), std::filesystem::path("/sweeps/x/runs/pre.seed2"));
}

TEST(SweepExpansion, InitFromAGroupThatCannotBeTheSourceIsAnError) {
  ScratchDir dir;
  const std::string base = std::string("base = \"base.toml\"\n") + kWarmStart;
  EXPECT_NE(expansion_error(dir, base + "[recipes.x]\ninit_from = \"@nope\"\n[axes]\nrecipe = [\"x\", \"pre\"]\n")
                .find("init_from = \"@nope\" (in run 'x'): no run of group 'nope'"),
            std::string::npos);
  EXPECT_NE(expansion_error(dir, base + "[recipes.x]\ninit_from = \"@x\"\n[axes]\nrecipe = [\"x\"]\n")
                .find("a run cannot start from itself"),
            std::string::npos);
  EXPECT_NE(expansion_error(dir, base + "[recipes.x]\ninit_from = \"@ft\"\n[axes]\nrecipe = [\"x\", \"ft\", \"pre\"]\n")
                .find("run 'ft' itself starts from another run of this sweep"),
            std::string::npos);
  // Seeds pair the runs: a finetune on seed 3 has no BF16 run of seed 3 to start from.
  EXPECT_NE(expansion_error(dir, base + "[[runs]]\nrecipe = \"pre\"\nseed = 1\n[[runs]]\nrecipe = \"ft\"\nseed = 3\n")
                .find("no run of group 'pre' with the seed of this run (seed3)"),
            std::string::npos);
}

}  // namespace
}  // namespace altgrad::sweep
