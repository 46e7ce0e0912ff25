// sr_bits in the [quant] table: read wherever rounding is (role tables, overrides), refused with
// file:line, key and value outside [1, 32] or where the rounding is not stochastic, reset to 32
// where a later table names another rounding, written to recipe.json only when below 32, and read
// back from it.
#include <gtest/gtest.h>

#include <string>

#include "recipe/recipe.hpp"
#include "support/error_message.hpp"
#include "support/recipe_config.hpp"

// A namespace of its own: the recipe tests build as one unity file.
namespace altgrad::recipe::sr_bits_recipe_test {
namespace {

using test_support::config_with;
using test_support::recipe_error;
using test_support::settings_at;
using test_support::mentions;
using test_support::message_of;

constexpr const char* kStochasticGrads =
    "[quant]\npreset = \"fp8-hybrid\"\n[quant.grad]\nrounding = \"stochastic\"\nsr_bits = 8\n";

TEST(SrBitsRecipe, IsReadFromRoleTablesAndOverrides) {
  const Recipe r = resolve_recipe(config_with(std::string(kStochasticGrads) +
                                              "[[quant.override]]\nmatch = \"h.1.*:grad\"\nsr_bits = 12\n"));
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:grad").sr_bits, 8);
  EXPECT_EQ(settings_at(r, "h.1.mlp.c_fc:grad").sr_bits, 12);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:act").sr_bits, 32);
}

TEST(SrBitsRecipe, RefusesValuesOutsideOneToThirtyTwo) {
  EXPECT_TRUE(mentions(recipe_error("[quant.grad]\nrounding = \"stochastic\"\nsr_bits = 0\n"), {"test.toml:", "sr_bits", "0"}));
  EXPECT_TRUE(mentions(recipe_error("[quant.grad]\nrounding = \"stochastic\"\nsr_bits = 33\n"), {"sr_bits", "33"}));
}

TEST(SrBitsRecipe, RefusesARoundingThatIsNotStochastic) {
  const std::string message = recipe_error("[quant.grad]\nformat = \"e5m2\"\nsr_bits = 8\n");
  EXPECT_TRUE(mentions(message, {"sr_bits = 8", "stochastic", "nearest"})) << message;
}

TEST(SrBitsRecipe, AnotherRoundingLaterResetsThemToThirtyTwo) {
  const Recipe r = resolve_recipe(config_with(std::string(kStochasticGrads) +
                                              "[[quant.override]]\nmatch = \"h.1.*:grad\"\nrounding = \"nearest\"\n"));
  EXPECT_EQ(settings_at(r, "h.1.mlp.c_fc:grad").sr_bits, 32);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:grad").sr_bits, 8);
}

TEST(SrBitsRecipe, RecipeJsonHoldsThemOnlyBelowThirtyTwo) {
  const config::TrainConfig c = config_with(kStochasticGrads);
  const Recipe r = resolve_recipe(c);
  const nlohmann::json json = recipe_to_json(r);
  const model::MatmulPoints points(config::gpt_config(c));
  const Recipe back = recipe_from_json(json, points, "recipe.json");
  for (std::size_t i = 0; i < r.points.size(); ++i) EXPECT_EQ(back.points[i].settings, r.points[i].settings) << r.points[i].name;
  EXPECT_NE(json.dump().find("\"sr_bits\":8"), std::string::npos);
  const nlohmann::json plain = recipe_to_json(resolve_recipe(config_with("[quant]\npreset = \"fp8-hybrid\"\n")));
  EXPECT_EQ(plain.dump().find("sr_bits"), std::string::npos);
}

}  // namespace
}  // namespace altgrad::recipe::sr_bits_recipe_test
