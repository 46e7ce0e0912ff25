// Per-GEMM settings: an override with `gemm` patches only the copy that GEMM reads of the Linear
// operands it matches; a later override without `gemm` patches every copy; a copy left equal to
// its point's is no copy of its own. Refused with the file:line and the key: an unknown GEMM, a
// match that selects no operand the GEMM reads, and delayed scaling in a GEMM's copy. Written to
// recipe.json only where some copy differs, and read back; the accumulation model of a GEMM
// follows the copies it reads.
#include <gtest/gtest.h>

#include <string>

#include "recipe/recipe.hpp"
#include "support/error_message.hpp"
#include "support/recipe_config.hpp"

// A namespace of its own: the recipe tests build as one unity file.
namespace altgrad::recipe::gemm_settings_recipe_test {
namespace {

using test_support::config_with;
using test_support::mentions;
using test_support::recipe_error;
using test_support::settings_at;

const ResolvedPoint& point_at(const Recipe& r, std::string_view name) {
  for (const ResolvedPoint& p : r.points) {
    if (p.name == name) return p;
  }
  throw std::out_of_range(std::string(name));
}

// torchao's rowwise_with_gw_hp in this syntax: the weight-gradient GEMM in high precision (X and dY
// unquantized there), the other GEMMs under current scaling.
constexpr const char* kWgradHighPrecision =
    "[quant]\npreset = \"te-current\"\n"
    "[[quant.override]]\nmatch = \"*\"\ngemm = \"wgrad\"\nenabled = false\n";

TEST(GemmSettingsRecipe, AnOverrideWithGemmPatchesOnlyThatGemmsCopies) {
  const Recipe r = resolve_recipe(config_with(kWgradHighPrecision));
  const ResolvedPoint& x = point_at(r, "h.0.mlp.c_fc:act");
  const ResolvedPoint& w = point_at(r, "h.0.mlp.c_fc:weight");
  const ResolvedPoint& dy = point_at(r, "h.0.mlp.c_fc:grad");
  EXPECT_TRUE(x.settings_for(Gemm::forward).enabled);
  EXPECT_FALSE(x.settings_for(Gemm::wgrad).enabled);
  EXPECT_TRUE(dy.settings_for(Gemm::dgrad).enabled);
  EXPECT_FALSE(dy.settings_for(Gemm::wgrad).enabled);
  EXPECT_EQ(dy.settings_for(Gemm::dgrad).format_name, "e5m2");
  // W is not read by wgrad: untouched, no copy of its own. Nor are the attention operands.
  EXPECT_FALSE(w.differs_by_gemm());
  EXPECT_FALSE(point_at(r, "h.0.attn.q").differs_by_gemm());
  // The LM head's operands are matched too, but its points are off and stay so.
  EXPECT_FALSE(point_at(r, "lm_head:act").differs_by_gemm());
}

TEST(GemmSettingsRecipe, LaterOverridesWithoutGemmPatchEveryCopy) {
  const Recipe r = resolve_recipe(config_with(
      "[quant]\npreset = \"te-current\"\n"
      "[[quant.override]]\nmatch = \"h.*:act\"\ngemm = \"wgrad\"\nformat = \"e5m2\"\n"
      "[[quant.override]]\nmatch = \"h.0.*:act\"\nrounding = \"stochastic\"\n"));
  const ResolvedPoint& x0 = point_at(r, "h.0.attn.c_attn:act");
  EXPECT_EQ(x0.settings_for(Gemm::forward).format_name, "e4m3");
  EXPECT_EQ(x0.settings_for(Gemm::wgrad).format_name, "e5m2");
  EXPECT_EQ(x0.settings_for(Gemm::forward).rounding, format::Rounding::stochastic);
  EXPECT_EQ(x0.settings_for(Gemm::wgrad).rounding, format::Rounding::stochastic);
  EXPECT_EQ(point_at(r, "h.1.attn.c_attn:act").settings_for(Gemm::wgrad).rounding, format::Rounding::nearest_even);
}

// A recipe that quantizes only some GEMM's copies quantizes: the run builds its hooks.
TEST(GemmSettingsRecipe, ARecipeWithOnlyAGemmsCopyOnQuantizes) {
  const Recipe r = resolve_recipe(config_with("[quant]\n[[quant.override]]\nmatch = \"h.*:grad\"\ngemm = \"wgrad\"\n"
                                              "format = \"e5m2\"\nscaling = \"tensor\"\n"));
  EXPECT_FALSE(point_at(r, "h.0.mlp.c_fc:grad").settings.enabled);
  EXPECT_TRUE(point_at(r, "h.0.mlp.c_fc:grad").settings_for(Gemm::wgrad).enabled);
  EXPECT_TRUE(r.any_enabled());
}

TEST(GemmSettingsRecipe, ACopyEqualToItsPointIsNone) {
  const Recipe r = resolve_recipe(config_with(
      "[quant]\npreset = \"te-current\"\n[[quant.override]]\nmatch = \"*:weight\"\ngemm = \"dgrad\"\n"
      "format = \"e4m3\"\n"));
  EXPECT_FALSE(point_at(r, "h.0.mlp.c_proj:weight").differs_by_gemm());
}

TEST(GemmSettingsRecipe, BadOverridesNameTheirLineAndKey) {
  EXPECT_TRUE(mentions(recipe_error("[quant]\npreset = \"te-current\"\n[[quant.override]]\nmatch = \"*\"\n"
                                    "gemm = \"backward\"\nenabled = false\n"),
                       {"test.toml:9", "gemm", "backward", "forward", "dgrad", "wgrad"}));
  EXPECT_TRUE(mentions(recipe_error("[quant]\npreset = \"te-current\"\n[[quant.override]]\nmatch = \"*:weight\"\n"
                                    "gemm = \"wgrad\"\nenabled = false\n"),
                       {"test.toml:8", "*:weight", "no Linear operand that the wgrad GEMM reads", ":grad and :act"}));
  EXPECT_TRUE(mentions(recipe_error("[quant]\npreset = \"te-current\"\n[[quant.override]]\nmatch = \"h.*.attn.q\"\n"
                                    "gemm = \"forward\"\nenabled = true\n"),
                       {"test.toml:8", "no Linear operand that the forward GEMM reads"}));
  // fp8-hybrid's points are delayed: a GEMM's copy must name a scaling without history.
  EXPECT_TRUE(mentions(recipe_error("[quant]\npreset = \"fp8-hybrid\"\n[[quant.override]]\nmatch = \"h.0.*:grad\"\n"
                                    "gemm = \"wgrad\"\nformat = \"e4m3\"\n"),
                       {"test.toml:8: h.0.attn.c_attn:grad (wgrad copy)", "scaling = delayed", "gemm = \"wgrad\""}));
  EXPECT_TRUE(mentions(recipe_error("[quant]\npreset = \"te-current\"\n[[quant.override]]\nmatch = \"*\"\n"
                                    "gemm = \"wgrad\"\nscaling = \"delayed\"\n"),
                       {"test.toml:8", "(wgrad copy)", "scaling = delayed"}));
  // A later override without gemm reaches the copies too.
  EXPECT_TRUE(mentions(recipe_error("[quant]\npreset = \"te-current\"\n[[quant.override]]\nmatch = \"*\"\n"
                                    "gemm = \"wgrad\"\nformat = \"e5m2\"\n[[quant.override]]\nmatch = \"h.1.*\"\n"
                                    "scaling = \"delayed\"\n"),
                       {"test.toml:12: h.1.attn.c_attn:act (wgrad copy)", "scaling = delayed"}));
}

TEST(GemmSettingsRecipe, RecipeJsonHoldsTheCopiesAndReadsThemBack) {
  const config::TrainConfig c = config_with(
      "[quant]\npreset = \"te-current\"\n[[quant.override]]\nmatch = \"*:weight\"\ngemm = \"dgrad\"\n"
      "format = \"e2m1\"\nscaling = \"block\"\nblock = 16\nscale_format = \"e4m3\"\n");
  const Recipe r = resolve_recipe(c);
  const nlohmann::json json = recipe_to_json(r);
  const nlohmann::json& w = json.at("points").at(1);
  ASSERT_EQ(w.at("name"), "h.0.attn.c_attn:weight");
  EXPECT_EQ(w.at("gemms").at("dgrad").at("format"), "e2m1");
  EXPECT_EQ(w.at("gemms").at("dgrad").at("scale_format"), "e4m3");
  EXPECT_FALSE(w.at("gemms").contains("forward"));
  EXPECT_FALSE(json.at("points").at(0).contains("gemms"));
  const model::MatmulPoints points(config::gpt_config(c));
  const Recipe back = recipe_from_json(json, points, "recipe.json");
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    EXPECT_EQ(back.points[i].settings, r.points[i].settings) << r.points[i].name;
    EXPECT_EQ(back.points[i].by_gemm, r.points[i].by_gemm) << r.points[i].name;
  }
  // A file whose copy names a GEMM that does not read the operand is refused, by point and copy.
  nlohmann::json bad = json;
  bad["points"][1]["gemms"]["wgrad"] = bad["points"][1]["gemms"]["dgrad"];
  EXPECT_TRUE(mentions(test_support::message_of<io::CheckpointError>(
                           [&] { (void)recipe_from_json(bad, points, "recipe.json"); }),
                       {"recipe.json", "h.0.attn.c_attn:weight (wgrad copy)", "does not read"}));
}

// hopper needs both operands a GEMM reads quantized: with X's and dY's wgrad copies off, wgrad
// accumulates in FP32 while forward and dgrad keep the model.
TEST(GemmSettingsRecipe, AGemmsAccumulationFollowsTheCopiesItReads) {
  const Recipe r = resolve_recipe(config_with(std::string(kWgradHighPrecision) + "[quant.accumulate]\n"
                                              "forward = \"hopper\"\ndgrad = \"hopper\"\nwgrad = \"hopper\"\n"));
  EXPECT_TRUE(r.accumulation(0, Gemm::forward).emulated());
  EXPECT_TRUE(r.accumulation(0, Gemm::dgrad).emulated());
  EXPECT_FALSE(r.accumulation(0, Gemm::wgrad).emulated());
  EXPECT_TRUE(settings_at(r, "h.0.attn.c_attn:act").enabled);
}

}  // namespace
}  // namespace altgrad::recipe::gemm_settings_recipe_test
