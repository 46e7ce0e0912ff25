// `tile` in the [quant] table: 2-D tiles on weights under block scaling, read from role tables and
// overrides; refused on activations, gradients and attention operands, without block scaling, and
// with a block over 128, each with a message naming the key; written to recipe.json only when on,
// and read back.
#include <gtest/gtest.h>

#include <string>

#include "recipe/recipe.hpp"
#include "support/error_message.hpp"
#include "support/recipe_config.hpp"

// A namespace of its own: the recipe tests build as one unity file.
namespace altgrad::recipe::tiles_recipe_test {
namespace {

using test_support::config_with;
using test_support::recipe_error;
using test_support::settings_at;
using test_support::mentions;
using test_support::message_of;

constexpr const char* kTiledWeights = "[quant]\npreset = \"mx8\"\n[quant.weight]\nblock = 16\ntile = true\n";

TEST(TilesRecipe, AreReadForWeights) {
  const Recipe r = resolve_recipe(config_with(kTiledWeights));
  EXPECT_TRUE(settings_at(r, "h.0.mlp.c_fc:weight").tiles);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:weight").block, 16u);
  EXPECT_FALSE(settings_at(r, "h.0.mlp.c_fc:act").tiles);
  const Recipe off = resolve_recipe(config_with(std::string(kTiledWeights) +
                                                "[[quant.override]]\nmatch = \"h.1.*:weight\"\ntile = false\n"));
  EXPECT_FALSE(settings_at(off, "h.1.attn.c_proj:weight").tiles);
}

TEST(TilesRecipe, AreRefusedOffWeights) {
  const std::string message = recipe_error("[quant]\npreset = \"mx8\"\n[quant.act]\ntile = true\n");
  EXPECT_TRUE(mentions(message, {":act", "tile = true", "weight"})) << message;
  const std::string grad = recipe_error("[quant]\npreset = \"mx8\"\n[[quant.override]]\nmatch = \"h.0.*:grad\"\ntile = true\n");
  EXPECT_TRUE(mentions(grad, {"h.0.", ":grad", "tile = true"})) << grad;
}

TEST(TilesRecipe, NeedBlockScalingAndATileOfAtMost128) {
  EXPECT_TRUE(mentions(recipe_error("[quant]\npreset = \"fp8-hybrid\"\n[quant.weight]\ntile = true\n"),
                       {"tile = true", "scaling = \"block\"", "delayed"}));
  EXPECT_TRUE(mentions(recipe_error("[quant]\npreset = \"mx8\"\n[quant.weight]\nblock = 256\ntile = true\n"),
                       {"block = 256", "tile = true", "128"}));
  EXPECT_TRUE(mentions(recipe_error("[quant]\npreset = \"mx8\"\n[quant.weight]\ntile = 1\n"), {"test.toml:", "tile"}));
}

TEST(TilesRecipe, RecipeJsonHoldsThemOnlyWhereOn) {
  const config::TrainConfig c = config_with(kTiledWeights);
  const Recipe r = resolve_recipe(c);
  const nlohmann::json json = recipe_to_json(r);
  const Recipe back = recipe_from_json(json, model::MatmulPoints(config::gpt_config(c)), "recipe.json");
  for (std::size_t i = 0; i < r.points.size(); ++i) EXPECT_EQ(back.points[i].settings, r.points[i].settings) << r.points[i].name;
  EXPECT_NE(json.dump().find("\"tile\":true"), std::string::npos);
  EXPECT_EQ(recipe_to_json(resolve_recipe(config_with("[quant]\npreset = \"mx8\"\n"))).dump().find("tile"), std::string::npos);
}

}  // namespace
}  // namespace altgrad::recipe::tiles_recipe_test
