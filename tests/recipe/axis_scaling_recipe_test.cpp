// block = "axis" (one block along the whole reduction axis: torchao's axiswise scaling) and
// scale_format = "fp32_pow2" under tensor scaling in the [quant] table: read in role tables and
// overrides, written to recipe.json as "axis" and read back, and refused with file:line, key and
// value where they cannot apply.
#include <gtest/gtest.h>

#include <string>

#include "recipe/recipe.hpp"
#include "support/error_message.hpp"
#include "support/recipe_config.hpp"

// A namespace of its own: the recipe tests build as one unity file.
namespace altgrad::recipe::axis_scaling_recipe_test {
namespace {

using test_support::config_with;
using test_support::mentions;
using test_support::recipe_error;
using test_support::settings_at;

constexpr const char* kAxis =
    "[quant.act]\nscaling = \"block\"\nblock = \"axis\"\nscale_format = \"fp32_pow2\"\n"
    "[quant.weight]\nscaling = \"tensor\"\nscale_format = \"fp32_pow2\"\n";

TEST(AxisScalingRecipe, BlockAxisAndAPowerOfTwoTensorScaleAreRead) {
  const Recipe r = resolve_recipe(config_with(kAxis));
  const quant::PointSettings& act = settings_at(r, "h.0.mlp.c_fc:act");
  EXPECT_EQ(act.block, quant::kAxisBlock);
  EXPECT_EQ(act.scale_format, quant::BlockScaleFormat::fp32_pow2);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:weight").scaling, quant::Scaling::tensor);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:weight").scale_format, quant::BlockScaleFormat::fp32_pow2);
}

TEST(AxisScalingRecipe, RecipeJsonSpellsTheAxisAndReadsItBack) {
  const config::TrainConfig c = config_with(kAxis);
  const Recipe r = resolve_recipe(c);
  const nlohmann::json json = recipe_to_json(r);
  bool axis_written = false;
  for (const auto& point : json["points"]) axis_written |= point["block"] == "axis";
  EXPECT_TRUE(axis_written);
  const Recipe back = recipe_from_json(json, model::MatmulPoints(config::gpt_config(c)), "recipe.json");
  for (std::size_t i = 0; i < r.points.size(); ++i) EXPECT_EQ(back.points[i].settings, r.points[i].settings) << r.points[i].name;
}

TEST(AxisScalingRecipe, WhatCannotApplyIsRefusedByName) {
  EXPECT_TRUE(mentions(recipe_error("[quant.act]\nscaling = \"block\"\nblock = \"rows\"\n"),
                       {"test.toml:7", "block", "'rows'", "\"axis\""}));
  EXPECT_TRUE(mentions(recipe_error("[quant.act]\nscaling = \"block\"\nblock = 0\n"), {"test.toml:7", "block", "0"}));
  EXPECT_TRUE(mentions(recipe_error("[quant.act]\nformat = \"e2m1\"\nscaling = \"block\"\nblock = \"axis\"\n"
                                    "scale_format = \"e4m3\"\n"),
                       {"test.toml:5", "block = \"axis\"", "scale_format = \"e4m3\""}));
  EXPECT_TRUE(mentions(recipe_error("[quant.weight]\nscaling = \"block\"\nblock = \"axis\"\ntile = true\n"),
                       {"test.toml:5", "block = \"axis\"", "tile = true"}));
  EXPECT_TRUE(mentions(recipe_error("[quant.grad]\nscaling = \"delayed\"\nscale_format = \"fp32_pow2\"\n"),
                       {"test.toml:5", "fp32_pow2", "delayed"}));
}

// Naming a per-tensor scaling without a scale format starts it from FP32: te-float8-block's
// power of two does not carry over to a point switched to current or delayed scaling.
TEST(AxisScalingRecipe, APerTensorScalingNamedAloneStartsFromAnFp32Scale) {
  const Recipe r = resolve_recipe(config_with("[quant]\npreset = \"te-float8-block\"\n[quant.grad]\nscaling = \"tensor\"\n"
                                              "[quant.act]\nscaling = \"delayed\"\n"));
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:grad").scale_format, quant::BlockScaleFormat::e8m0);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:act").scale_format, quant::BlockScaleFormat::e8m0);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:weight").scale_format, quant::BlockScaleFormat::fp32_pow2);
}

// recipe.json: a block of 0 is no block (only "axis" is the whole axis); a delayed point's
// fp32_pow2, which files written before the reset above could hold, reads as the FP32 scale its
// run used.
TEST(AxisScalingRecipe, RecipeJsonRefusesBlockZeroAndReadsOldDelayedPoints) {
  const config::TrainConfig c = config_with("[quant]\npreset = \"fp8-hybrid\"\n");
  const model::MatmulPoints points(config::gpt_config(c));
  nlohmann::json json = recipe_to_json(resolve_recipe(c));
  std::size_t grad = 0;
  while (json["points"][grad]["name"] != "h.0.mlp.c_fc:grad") ++grad;
  json["points"][grad]["scale_format"] = "fp32_pow2";
  EXPECT_EQ(recipe_from_json(json, points, "recipe.json").points[grad].settings.scale_format,
            quant::BlockScaleFormat::e8m0);
  json["points"][grad]["block"] = 0;
  EXPECT_THROW((void)recipe_from_json(json, points, "recipe.json"), std::exception);
}

TEST(AxisScalingRecipe, E4m3ScaledTilesHoldAtMost1024Elements) {
  EXPECT_TRUE(mentions(recipe_error("[quant]\npreset = \"te-nvfp4\"\n[quant.weight]\nblock = 33\n"),
                       {"block = 33", "tile = true", "scale_format = \"e4m3\"", "side at most 32"}));
  (void)resolve_recipe(config_with("[quant]\npreset = \"te-nvfp4\"\n[quant.weight]\nblock = 32\n"));
}

}  // namespace
}  // namespace altgrad::recipe::axis_scaling_recipe_test
