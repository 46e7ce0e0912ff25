// The Hadamard element of a recipe (docs/quantization.md, "Hadamard transforms"): [quant.hadamard]
// and its phases, the checks against the model's axes, errors naming file:line, key and value, and
// recipe.json, which gains "hadamard" only where some GEMM is transformed.
#include <gtest/gtest.h>

#include <string>

#include "config/config.hpp"
#include "io/safetensors.hpp"
#include "model/matmul_points.hpp"
#include "recipe/hadamard_layers.hpp"
#include "recipe/recipe.hpp"
#include "support/error_message.hpp"

namespace altgrad::recipe {
namespace {

using config::ConfigError;
using test_support::mentions;
using test_support::message_of;

// C = 32, so c_attn's OC = 96, c_fc's 128; the quant text starts at line 5 of test.toml.
config::TrainConfig hadamard_config(const std::string& quant_toml, int block_size = 32) {
  return config::parse_config("n_layer = 2\nn_head = 2\nn_embd = 32\nblock_size = " + std::to_string(block_size) +
                                  "\n" + quant_toml,
                              "test.toml");
}

std::string hadamard_error(const std::string& quant_toml, int block_size = 32) {
  const std::string message =
      message_of<ConfigError>([&] { (void)resolve_schedule(hadamard_config(quant_toml, block_size)); });
  EXPECT_TRUE(message.starts_with("test.toml:")) << message;
  return message;
}

TEST(HadamardRecipe, ReadsTheTableWithItsDefaults) {
  const Recipe r = resolve_recipe(hadamard_config("[quant]\npreset = \"mx8\"\n[quant.hadamard]\ngemms = [\"wgrad\"]\n"));
  EXPECT_TRUE(r.hadamard.any());
  EXPECT_FALSE(r.hadamard.transforms(Gemm::forward));
  EXPECT_FALSE(r.hadamard.transforms(Gemm::dgrad));
  EXPECT_TRUE(r.hadamard.transforms(Gemm::wgrad));
  EXPECT_EQ(r.hadamard.size, 16u);
  EXPECT_EQ(r.hadamard.signs, HadamardSigns::seeded);
  EXPECT_EQ(r.hadamard.match, "h.*");
  const Recipe te = resolve_recipe(hadamard_config(
      "[quant.hadamard]\ngemms = [\"forward\", \"dgrad\"]\nsize = 16\nsigns = \"te\"\nmatch = \"h.1.mlp.*\"\n"));
  EXPECT_TRUE(te.hadamard.transforms(Gemm::forward) && te.hadamard.transforms(Gemm::dgrad));
  EXPECT_EQ(te.hadamard.signs, HadamardSigns::te);
  EXPECT_FALSE(resolve_recipe(hadamard_config("[quant]\npreset = \"mx8\"\n")).hadamard.any());
}

TEST(HadamardRecipe, SelectsTheLinearLayersItsMatchNames) {
  const config::TrainConfig c = hadamard_config("[quant.hadamard]\ngemms = [\"wgrad\"]\nmatch = \"h.1.mlp.*\"\n");
  const model::MatmulPoints points(config::gpt_config(c));
  const auto gemms = hadamard_gemms(resolve_recipe(c).hadamard, points);
  for (const model::MatmulPoint& m : points.all()) {
    const bool selected = m.name == "h.1.mlp.c_fc" || m.name == "h.1.mlp.c_proj";
    EXPECT_EQ(gemms[m.index][static_cast<std::size_t>(Gemm::wgrad)], selected) << m.name;
    EXPECT_FALSE(gemms[m.index][static_cast<std::size_t>(Gemm::forward)]) << m.name;
  }
  // The default leaves the LM head out, as a recipe's points do; "*" takes it.
  const Recipe all = resolve_recipe(hadamard_config("[quant.hadamard]\ngemms = [\"forward\"]\nmatch = \"*\"\n"));
  EXPECT_TRUE(hadamard_gemms(all.hadamard, points)[points.lm_head().index][0]);
  const Recipe blocks = resolve_recipe(hadamard_config("[quant.hadamard]\ngemms = [\"forward\"]\n"));
  EXPECT_FALSE(hadamard_gemms(blocks.hadamard, points)[points.lm_head().index][0]);
}

TEST(HadamardRecipe, RefusesSizesThatDoNotDivideAnAxis) {
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"wgrad\"]\nsize = 64\n"),
                       {"test.toml:5", "hadamard.size = 64", "wgrad", "block_size", "= 32"}));
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"wgrad\"]\nsize = 16\n", 24),
                       {"hadamard.size = 16", "within a sequence", "= 24"}));
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"forward\"]\nsize = 64\n"),
                       {"hadamard.size = 64", "h.0.attn.c_attn's forward", "in features C = 32"}));
  // dgrad reduces over OC: c_attn's 96 is no multiple of 64 (c_fc's 128 would be).
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"dgrad\"]\nsize = 64\nmatch = \"h.*.attn.c_attn\"\n",
                                      128),
                       {"hadamard.size = 64", "h.0.attn.c_attn's dgrad", "out features OC = 96"}));
  EXPECT_NO_THROW((void)resolve_recipe(
      hadamard_config("[quant.hadamard]\ngemms = [\"dgrad\", \"wgrad\"]\nsize = 32\n")));
}

TEST(HadamardRecipe, ErrorsNameFileLineKeyAndValue) {
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"wgrad\"]\nsize = 8\n"),
                       {"test.toml:5", "hadamard.size = 8", "16, 32, 64, 128"}));
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"wgrad\"]\nsize = 32\nsigns = \"te\"\n"),
                       {"test.toml:5", "hadamard.signs = \"te\"", "size = 16", "size = 32"}));
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"wgrd\"]\n"),
                       {"test.toml:6", "hadamard.gemms", "\"wgrd\"", "did you mean \"wgrad\""}));
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"wgrad\"]\nsigns = \"random\"\n"),
                       {"test.toml:7", "hadamard.signs", "random", "te | seeded | none"}));
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"wgrad\"]\nsized = 16\n"),
                       {"test.toml:7", "unknown key 'hadamard.sized'", "did you mean 'hadamard.size'"}));
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\nsize = 16\n"), {"test.toml:5", "needs gemms"}));
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"wgrad\"]\nmatch = \"h.9.*\"\n"),
                       {"test.toml:5", "hadamard.match = \"h.9.*\"", "selects no Linear layer"}));
}

TEST(HadamardRecipe, RefusesTheAttentionProducts) {
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"attention\"]\n"),
                       {"test.toml:6", "hadamard.gemms", "attention", "Linear GEMMs only"}));
  EXPECT_TRUE(mentions(hadamard_error("[quant.hadamard]\ngemms = [\"forward\"]\nmatch = \"h.*.attn.[qkv]\"\n"),
                       {"test.toml:5", "selects attention points", "take no Hadamard transform"}));
}

// A phase without a preset keeps the previous phase's element unless it names its own, which
// replaces it whole; a phase with a preset starts without one; gemms = [] switches it off.
TEST(HadamardRecipe, PhasesKeepReplaceOrDropTheElement) {
  const Schedule s = resolve_schedule(hadamard_config(
      "[quant]\npreset = \"mx8\"\n[quant.hadamard]\ngemms = [\"wgrad\"]\nsigns = \"te\"\n"
      "[[quant.phase]]\nstart = 10\n[quant.phase.act]\nformat = \"e3m4\"\n"
      "[[quant.phase]]\nstart = 20\n[quant.phase.hadamard]\ngemms = [\"dgrad\", \"wgrad\"]\nsize = 32\n"
      "[[quant.phase]]\nstart = 30\n[quant.phase.hadamard]\ngemms = []\n"
      "[[quant.phase]]\nstart = 40\n[quant.phase.hadamard]\ngemms = [\"wgrad\"]\n"
      "[[quant.phase]]\nstart = 50\npreset = \"mx8\"\n"));
  ASSERT_EQ(s.phases.size(), 6u);
  EXPECT_EQ(s.phases[1].recipe.hadamard, s.phases[0].recipe.hadamard);
  EXPECT_TRUE(s.phases[2].recipe.hadamard.transforms(Gemm::dgrad));
  EXPECT_EQ(s.phases[2].recipe.hadamard.size, 32u);
  EXPECT_EQ(s.phases[2].recipe.hadamard.signs, HadamardSigns::seeded);  // replaced whole: the default signs
  EXPECT_FALSE(s.phases[3].recipe.hadamard.any());
  EXPECT_TRUE(s.phases[4].recipe.hadamard.transforms(Gemm::wgrad));
  EXPECT_FALSE(s.phases[5].recipe.hadamard.any());
  EXPECT_TRUE(mentions(hadamard_error("[quant]\n[[quant.phase]]\nstart = 5\n[quant.phase.hadamard]\ngemms = [\"wgrad\"]\n"
                                      "size = 128\n"),
                       {"test.toml:8", "hadamard.size = 128", "block_size"}));
}

TEST(HadamardRecipe, JsonRoundTripKeepsTheElement) {
  const config::TrainConfig c = hadamard_config(
      "[quant]\npreset = \"mx8\"\n[quant.hadamard]\ngemms = [\"forward\", \"wgrad\"]\nsize = 32\nsigns = \"none\"\n"
      "match = \"h.*.mlp.*\"\n");
  const model::MatmulPoints points(config::gpt_config(c));
  const Recipe r = resolve_recipe(c);
  const nlohmann::json json = recipe_to_json(r);
  EXPECT_EQ(json.at("hadamard"),
            nlohmann::json::parse(R"({"gemms": ["forward", "wgrad"], "size": 32, "signs": "none", "match": "h.*.mlp.*"})"));
  const Recipe back = recipe_from_json(json, points, "recipe.json");
  EXPECT_EQ(back.hadamard, r.hadamard);
  EXPECT_EQ(recipe_to_json(back), json);
  // A schedule's phases each carry their own.
  const nlohmann::json phases = schedule_to_json(resolve_schedule(hadamard_config(
      "[quant]\npreset = \"mx8\"\n[[quant.phase]]\nstart = 10\n[quant.phase.hadamard]\ngemms = [\"wgrad\"]\n")));
  EXPECT_FALSE(phases.at("phases").at(0).at("recipe").contains("hadamard"));
  EXPECT_EQ(phases.at("phases").at(1).at("recipe").at("hadamard").at("signs"), "seeded");
}

TEST(HadamardRecipe, RecipesWithoutOneWriteNoHadamardKey) {
  for (const char* toml : {"", "[quant]\npreset = \"fp8-hybrid\"\n", "[quant]\npreset = \"mx8\"\n",
                           "[quant]\npreset = \"mx8\"\n[quant.hadamard]\ngemms = []\n"}) {
    EXPECT_FALSE(recipe_to_json(resolve_recipe(hadamard_config(toml))).contains("hadamard")) << toml;
  }
}

TEST(HadamardRecipe, BadJsonNamesTheSource) {
  const config::TrainConfig c = hadamard_config("[quant]\npreset = \"mx8\"\n[quant.hadamard]\ngemms = [\"wgrad\"]\n");
  const model::MatmulPoints points(config::gpt_config(c));
  nlohmann::json json = recipe_to_json(resolve_recipe(c));
  json["hadamard"]["size"] = 48;
  EXPECT_TRUE(mentions(message_of<io::CheckpointError>([&] { (void)recipe_from_json(json, points, "ckpt/recipe.json"); }),
                       {"ckpt/recipe.json", "hadamard.size = 48"}));
  json["hadamard"]["size"] = 16;
  json["hadamard"]["gemms"] = {"attention"};
  EXPECT_TRUE(mentions(message_of<io::CheckpointError>([&] { (void)recipe_from_json(json, points, "ckpt/recipe.json"); }),
                       {"ckpt/recipe.json", "attention"}));
  json["hadamard"]["gemms"] = {"forward"};
  json["hadamard"]["size"] = 64;  // C = 32
  EXPECT_TRUE(mentions(message_of<io::CheckpointError>([&] { (void)recipe_from_json(json, points, "ckpt/recipe.json"); }),
                       {"ckpt/recipe.json", "in features C = 32"}));
}

}  // namespace
}  // namespace altgrad::recipe
