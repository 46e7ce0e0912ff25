// The [quant] table: presets, role defaults, override precedence, resolution against the model's
// points, errors that name file:line, key and value, and the recipe.json round trip.
#include "recipe/recipe.hpp"

#include <gtest/gtest.h>

#include <string>

#include "io/safetensors.hpp"
#include "support/error_message.hpp"
#include "support/recipe_config.hpp"

namespace altgrad::recipe {
namespace {

using quant::Scaling;
using test_support::config_with;
using test_support::settings_at;
using test_support::mentions;
using test_support::message_of;

recipe::Recipe recipe_of(const std::string& quant_toml) { return recipe::resolve_recipe(config_with(quant_toml)); }

TEST(QuantRecipe, EmptyTableIsFp32) {
  const recipe::Recipe r = recipe_of("");
  EXPECT_EQ(r.preset, "fp32");
  EXPECT_FALSE(r.any_enabled());
  EXPECT_EQ(r.points.size(), model::MatmulPoints(config::gpt_config(config_with(""))).operand_count());
  EXPECT_EQ(r.seed, config::TrainConfig{}.seed);  // stochastic rounding follows the run's seed
}

TEST(QuantRecipe, Fp8HybridPresetIsE4m3ForwardE5m2BackwardDelayed16) {
  const recipe::Recipe r = recipe_of("[quant]\npreset = \"fp8-hybrid\"\n");
  for (const char* name : {"h.0.attn.c_attn:act", "h.1.mlp.c_proj:weight"}) {
    EXPECT_TRUE(settings_at(r, name).enabled) << name;
    EXPECT_EQ(settings_at(r, name).format_name, "e4m3") << name;
    EXPECT_EQ(settings_at(r, name).scaling, Scaling::delayed);
    EXPECT_EQ(settings_at(r, name).history, 16u);
  }
  EXPECT_EQ(settings_at(r, "h.1.mlp.c_fc:grad").format_name, "e5m2");
  EXPECT_EQ(settings_at(r, "h.1.mlp.c_fc:grad").rounding, format::Rounding::nearest_even);
  // The LM head and the attention operands stay in FP32 unless switched on.
  EXPECT_FALSE(settings_at(r, "lm_head:act").enabled);
  EXPECT_FALSE(settings_at(r, "h.0.attn.probs").enabled);
}

TEST(QuantRecipe, PresetsCoverTheDocumentedSet) {
  EXPECT_EQ(settings_at(recipe_of("[quant]\npreset = \"bf16\"\n"), "lm_head:grad").format_name, "bf16,overflow=inf");
  EXPECT_TRUE(settings_at(recipe_of("[quant]\npreset = \"bf16\"\n"), "lm_head:grad").enabled);
  EXPECT_EQ(settings_at(recipe_of("[quant]\npreset = \"fp8-e4m3\"\n"), "h.0.mlp.c_fc:grad").format_name, "e4m3");
  const recipe::Recipe mx = recipe_of("[quant]\npreset = \"mx8\"\n");
  EXPECT_EQ(settings_at(mx, "h.0.mlp.c_fc:act").scaling, Scaling::block);
  EXPECT_EQ(settings_at(mx, "h.0.mlp.c_fc:act").block, 32u);
  EXPECT_EQ(settings_at(mx, "h.0.mlp.c_fc:act").scale_rule, quant::MxScaleRule::floor);
}

TEST(QuantRecipe, SplitRoundingIsOneLine) {
  const recipe::Recipe r = recipe_of("[quant]\npreset = \"fp8-hybrid\"\n[quant.grad]\nrounding = \"stochastic\"\n");
  EXPECT_EQ(settings_at(r, "h.0.attn.c_proj:grad").rounding, format::Rounding::stochastic);
  EXPECT_EQ(settings_at(r, "h.0.attn.c_proj:grad").format_name, "e5m2");  // the preset's other settings stay
  EXPECT_EQ(settings_at(r, "h.0.attn.c_proj:act").rounding, format::Rounding::nearest_even);
}

TEST(QuantRecipe, OverridesSelectByGlobAndLaterEntriesWin) {
  const recipe::Recipe r = recipe_of(
      "[quant]\npreset = \"fp8-hybrid\"\n"
      "[[quant.override]]\nmatch = \"h.*.attn.probs\"\nformat = \"e1m6\"\n"
      "[[quant.override]]\nmatch = \"h.1.*\"\nformat = \"e3m4\"\n"
      "[[quant.override]]\nmatch = \"h.1.mlp.c_fc:?eight\"\nenabled = false\n");
  EXPECT_TRUE(settings_at(r, "h.0.attn.probs").enabled);
  EXPECT_EQ(settings_at(r, "h.0.attn.probs").format_name, "e1m6");
  EXPECT_EQ(settings_at(r, "h.0.attn.probs").scaling, Scaling::delayed);  // the act role's other settings
  EXPECT_EQ(settings_at(r, "h.1.attn.probs").format_name, "e3m4");        // the later override wins
  EXPECT_EQ(settings_at(r, "h.1.mlp.c_fc:grad").format_name, "e3m4");
  EXPECT_FALSE(settings_at(r, "h.1.mlp.c_fc:weight").enabled);
  EXPECT_EQ(settings_at(r, "h.0.mlp.c_fc:grad").format_name, "e5m2");  // untouched
  EXPECT_FALSE(settings_at(r, "h.0.attn.q").enabled);
}

TEST(QuantRecipe, RoleTablesSwitchTheirRoleOn) {
  const recipe::Recipe r = recipe_of("[quant.act]\nformat = \"e2m5\"\nscaling = \"tensor\"\nmargin = 1\n");
  EXPECT_TRUE(settings_at(r, "h.0.attn.c_attn:act").enabled);
  EXPECT_EQ(settings_at(r, "h.0.attn.c_attn:act").format_name, "e2m5");
  EXPECT_EQ(settings_at(r, "h.0.attn.c_attn:act").margin, 1);
  EXPECT_FALSE(settings_at(r, "h.0.attn.c_attn:weight").enabled);
  EXPECT_FALSE(settings_at(r, "lm_head:act").enabled);
}

TEST(QuantRecipe, ErrorsNameFileLineKeyAndValue) {
  const auto error = [](const std::string& toml) {
    return message_of<config::ConfigError>([&] { (void)recipe_of(toml); });
  };
  EXPECT_TRUE(mentions(error("[quant]\npreset = \"fp9\"\n"), {"test.toml:6", "fp9", "fp8-hybrid", "mx8"}));
  EXPECT_TRUE(mentions(error("[quant]\n[[quant.override]]\nmatch = \"h.9.*\"\nformat = \"e4m3\"\n"),
                       {"test.toml:7", "h.9.*", "selects no quantization point"}));
  EXPECT_TRUE(mentions(error("[quant.act]\nformat = \"e4m3x\"\n"), {"test.toml:6", "e4m3x"}));
  EXPECT_TRUE(mentions(error("[quant.act]\nrounding = \"nearest-even\"\n"),
                       {"test.toml:6", "rounding", "nearest-even", "stochastic"}));
  EXPECT_TRUE(mentions(error("[quant.grad]\nhistory = 0\n"), {"test.toml:6", "history", "0", "[1, 1024]"}));
  // The MX quantizer takes blocks of at most 1024: a larger one is refused here, not at the first step.
  EXPECT_TRUE(mentions(error("[quant.act]\nscaling = \"block\"\nblock = 2048\n"),
                       {"test.toml:7", "block", "2048", "[1, 1024]"}));
  EXPECT_TRUE(mentions(error("[quant.grad]\nscalng = \"delayed\"\n"), {"test.toml:6", "scalng", "did you mean 'scaling'"}));
  EXPECT_TRUE(mentions(error("[quant.gradient]\nformat = \"e5m2\"\n"), {"gradient", "unknown key"}));
  EXPECT_TRUE(mentions(error("[quant]\n[[quant.override]]\nformat = \"e5m2\"\n"), {"needs match"}));
  EXPECT_TRUE(mentions(error("[quant.act]\nenabled = 1\n"), {"enabled", "true or false"}));
}

TEST(QuantRecipe, JsonRoundTripKeepsEverySetting) {
  const config::TrainConfig c = config_with(
      "[quant]\npreset = \"mx8\"\nseed = 99\n[quant.grad]\nrounding = \"stochastic\"\nscale_rule = \"round_up\"\n"
      "[[quant.override]]\nmatch = \"h.0.*\"\nformat = \"e5m2\"\nscaling = \"delayed\"\namax = \"most_recent\"\n");
  const recipe::Recipe r = recipe::resolve_recipe(c);
  const model::MatmulPoints points(config::gpt_config(c));
  const recipe::Recipe back = recipe::recipe_from_json(recipe::recipe_to_json(r), points, "recipe.json");
  EXPECT_EQ(back.preset, "mx8");
  EXPECT_EQ(back.seed, 99u);
  ASSERT_EQ(back.points.size(), r.points.size());
  for (std::size_t i = 0; i < r.points.size(); ++i) EXPECT_EQ(back.points[i].settings, r.points[i].settings) << r.points[i].name;
  nlohmann::json broken = recipe::recipe_to_json(r);
  broken["points"][3]["rounding"] = "sideways";
  EXPECT_TRUE(mentions(message_of<io::CheckpointError>([&] { (void)recipe::recipe_from_json(broken, points, "ck/recipe.json"); }),
                       {"ck/recipe.json"}));
}

// Found by fuzz/checkpoint_fuzzer.cpp (fuzz/corpus/checkpoint/regress_recipe_float_history): an
// integer setting written as 1e300 was converted with a plain cast, which is undefined behaviour.
TEST(QuantRecipe, JsonIntegersMustBeIntegersInRange) {
  const config::TrainConfig c = config_with("[quant]\npreset = \"fp8-hybrid\"\n");
  const model::MatmulPoints points(config::gpt_config(c));
  for (const char* key : {"history", "margin", "block"}) {
    for (const nlohmann::json& bad : {nlohmann::json(1e300), nlohmann::json(2.5), nlohmann::json(-1)}) {
      if (std::string(key) == "margin" && bad == nlohmann::json(-1)) continue;  // a negative margin is valid
      nlohmann::json broken = recipe::recipe_to_json(recipe::resolve_recipe(c));
      broken["points"][0][key] = bad;
      EXPECT_TRUE(mentions(message_of<io::CheckpointError>([&] { (void)recipe::recipe_from_json(broken, points, "ck/recipe.json"); }),
                           {"ck/recipe.json", key}))
          << key << " = " << bad.dump();
    }
  }
}

}  // namespace
}  // namespace altgrad::recipe
