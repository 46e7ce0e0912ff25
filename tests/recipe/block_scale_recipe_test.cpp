// scale_format in the [quant] table: read wherever scale_rule is (role tables, overrides, phases),
// refused with file:line, key and value when misspelt, refused beside a scale_rule where the format
// has no rule, written to recipe.json only when it is not e8m0, and read back from it.
#include <gtest/gtest.h>

#include <string>

#include "recipe/recipe.hpp"
#include "support/error_message.hpp"
#include "support/recipe_config.hpp"

// A namespace of its own: the recipe tests build as one unity file.
namespace altgrad::recipe::block_scale_recipe_test {
namespace {

using quant::BlockScaleFormat;
using quant::MxScaleRule;
using test_support::config_with;
using test_support::recipe_error;
using test_support::settings_at;
using test_support::mentions;
using test_support::message_of;

constexpr const char* kNvfp4 =
    "[quant.act]\nformat = \"e2m1\"\nscaling = \"block\"\nblock = 16\nscale_format = \"e4m3\"\n"
    "[quant.grad]\nformat = \"e4m3\"\nscaling = \"block\"\nblock = 128\nscale_format = \"fp32_pow2\"\n"
    "[[quant.override]]\nmatch = \"h.0.*:weight\"\nscaling = \"block\"\nscale_format = \"fp32\"\n"
    "[[quant.override]]\nmatch = \"h.1.*:weight\"\nscaling = \"block\"\nscale_rule = \"even\"\n";

TEST(BlockScaleRecipe, RoleTablesAndOverridesNameAScaleFormat) {
  const Recipe r = resolve_recipe(config_with(std::string("[quant]\n") + kNvfp4));
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:act").scale_format, BlockScaleFormat::e4m3);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:act").block, 16u);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:grad").scale_format, BlockScaleFormat::fp32_pow2);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:weight").scale_format, BlockScaleFormat::fp32);
  EXPECT_EQ(settings_at(r, "h.1.mlp.c_fc:weight").scale_format, BlockScaleFormat::e8m0);  // the default
  EXPECT_EQ(settings_at(r, "h.1.mlp.c_fc:weight").scale_rule, MxScaleRule::even);
}

TEST(BlockScaleRecipe, ABadScaleFormatNamesFileLineKeyAndValue) {
  EXPECT_TRUE(mentions(recipe_error("[quant.act]\nscaling = \"block\"\nscale_format = \"ue8m0\"\n"),
                       {"test.toml:7", "scale_format", "ue8m0", "e8m0 | fp32 | fp32_pow2 | e4m3"}));
  EXPECT_TRUE(mentions(recipe_error("[quant.act]\nscale_fromat = \"fp32\"\n"),
                       {"test.toml:6", "scale_fromat", "did you mean 'scale_format'"}));
  EXPECT_TRUE(mentions(recipe_error("[quant.act]\nscaling = \"block\"\nscale_rule = \"nearest\"\n"),
                       {"test.toml:7", "scale_rule", "nearest", "floor | round_up | ceil | even"}));
}

TEST(BlockScaleRecipe, AScaleRuleBesideAFormatWithoutOneIsRefused) {
  for (const char* format : {"fp32", "fp32_pow2", "e4m3"}) {
    const std::string table = std::string("[quant.act]\nscaling = \"block\"\nscale_format = \"") + format +
                              "\"\nscale_rule = \"round_up\"\n";
    EXPECT_TRUE(mentions(recipe_error(table), {"test.toml:5", "scale_rule = round_up", std::string("scale_format = ") + format}))
        << recipe_error(table);
  }
  // An override naming a rule on a point whose role has an FP32 scale format: refused at its match.
  EXPECT_TRUE(mentions(recipe_error("[quant.act]\nscaling = \"block\"\nscale_format = \"fp32\"\n"
                                "[[quant.override]]\nmatch = \"h.0.*:act\"\nscale_rule = \"ceil\"\n"),
                       {"test.toml:9", "scale_rule = ceil", "scale_format = fp32"}));
  // A rule from a table below stops applying where a scale format without one is named.
  const Recipe r = resolve_recipe(config_with("[quant.act]\nscaling = \"block\"\nscale_rule = \"ceil\"\n"
                                              "[[quant.override]]\nmatch = \"h.0.*:act\"\nscale_format = \"e4m3\"\n"));
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:act").scale_rule, MxScaleRule::floor);
  EXPECT_EQ(settings_at(r, "h.1.mlp.c_fc:act").scale_rule, MxScaleRule::ceil);
}

TEST(BlockScaleRecipe, PhasesSwitchTheScaleFormat) {
  const config::TrainConfig c = config_with(
      "[quant]\npreset = \"mx8\"\n[[quant.phase]]\nstart = 10\n[quant.phase.act]\nscale_format = \"fp32\"\n");
  const Schedule schedule = resolve_schedule(c);
  ASSERT_EQ(schedule.phases.size(), 2u);
  EXPECT_EQ(settings_at(schedule.phases[0].recipe, "h.0.mlp.c_fc:act").scale_format, BlockScaleFormat::e8m0);
  EXPECT_EQ(settings_at(schedule.phases[1].recipe, "h.0.mlp.c_fc:act").scale_format, BlockScaleFormat::fp32);
}

TEST(BlockScaleRecipe, RecipeJsonGainsTheKeyOnlyWhenItIsNotE8m0) {
  const config::TrainConfig c = config_with(std::string("[quant]\npreset = \"mx8\"\n") + kNvfp4);
  const Recipe r = resolve_recipe(c);
  const nlohmann::json json = recipe_to_json(r);
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const bool e8m0 = r.points[i].settings.scale_format == BlockScaleFormat::e8m0;
    EXPECT_EQ(json["points"][i].contains("scale_format"), !e8m0) << r.points[i].name;
  }
  const model::MatmulPoints points(config::gpt_config(c));
  const Recipe back = recipe_from_json(json, points, "recipe.json");
  for (std::size_t i = 0; i < r.points.size(); ++i) EXPECT_EQ(back.points[i].settings, r.points[i].settings) << r.points[i].name;
  EXPECT_EQ(recipe_to_json(back), json);
  // An MX recipe's file has no scale_format anywhere: files written before the key load unchanged.
  const nlohmann::json mx = recipe_to_json(resolve_recipe(config_with("[quant]\npreset = \"mx8\"\n")));
  EXPECT_EQ(mx.dump().find("scale_format"), std::string::npos);
}

}  // namespace
}  // namespace altgrad::recipe::block_scale_recipe_test
