// Value profiles in training: every point is profiled on diagnostic steps, quantized or not, and
// profiling changes no bit of the run.
#include <gtest/gtest.h>

#include <string>

#include "support/scratch_dir.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

config::TrainConfig profiled(const fs::path& corpus, const std::string& quant_toml, bool profile) {
  config::TrainConfig c = tiny_config(corpus);
  if (!quant_toml.empty()) c.quant = config::parse_config(quant_toml, "test.toml").quant;
  c.diag_interval = 2;
  c.profile_points = profile;
  return c;
}

TEST(ValueProfiles, ProfilingChangesNoBit) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  const std::string kRecipes[] = {
      "", "[quant]\npreset = \"fp8-hybrid\"\n[[quant.override]]\nmatch = \"h.*.attn.probs\"\nformat = \"e4m3\"\n",
      "[quant]\npreset = \"mx8\"\n"};
  int i = 0;
  for (const std::string& recipe : kRecipes) {
    SCOPED_TRACE(recipe.empty() ? "fp32" : recipe);
    const fs::path on = dir.path() / ("on" + std::to_string(i)), off = dir.path() / ("off" + std::to_string(i));
    ++i;
    const TrainOutcome a = run(profiled(corpus, recipe, true), on);
    const TrainOutcome b = run(profiled(corpus, recipe, false), off);
    for (const char* file : {"model.safetensors", "optimizer.safetensors", "state.json"}) {
      EXPECT_EQ(bytes_of(a.last_checkpoint / file), bytes_of(b.last_checkpoint / file)) << file;
    }
    EXPECT_EQ(logged_losses(on), logged_losses(off));
  }
}

TEST(ValueProfiles, AnFp32RunProfilesEveryMatmulOperand) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = profiled(dir.write("corpus.txt", generated_corpus()), "", true);
  (void)run(c, dir.path() / "run");
  const auto lines = json_lines(dir.path() / "run" / "metrics.jsonl");
  const nlohmann::json& profile = lines.at(1).at("diag").at("profile");  // step 2
  EXPECT_FALSE(lines.at(1).contains("quant"));  // nothing is quantized
  // Two blocks: 4 linear matmuls of 3 operands and 4 attention operands each, and the LM head's 3.
  EXPECT_EQ(profile.size(), 2u * (4 * 3 + 4) + 3);
  const std::size_t B = static_cast<std::size_t>(c.batch_size), T = static_cast<std::size_t>(c.block_size);
  // The probabilities' values are the entries a query can attend to: T(T+1)/2 per head and sequence.
  EXPECT_EQ(profile.at("h.0.attn.probs").at("count").get<std::size_t>(), B * static_cast<std::size_t>(c.n_head) * T * (T + 1) / 2);
  EXPECT_EQ(profile.at("h.0.attn.probs").at("max").get<double>(), 1.0);  // the first query attends to itself
  const nlohmann::json& act = profile.at("h.1.mlp.c_fc:act");
  EXPECT_EQ(act.at("count").get<std::size_t>(), B * T * static_cast<std::size_t>(c.n_embd));
  EXPECT_EQ(act.at("fit").at("format"), "e1m6");
  EXPECT_EQ(act.at("fit").at("scale"), "tensor (profile)");
  EXPECT_EQ(act.at("fit").at("overflow_pct").get<double>(), 0.0);  // scaled to its own amax
  EXPECT_GT(act.at("p99").get<double>(), act.at("p50").get<double>());
}

}  // namespace
}  // namespace altgrad::train
