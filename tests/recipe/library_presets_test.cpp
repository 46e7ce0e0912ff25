// The presets that mirror Transformer Engine's recipes, point by point, against those recipes'
// defaults as TE's source sets them (transformer_engine/common/recipe/__init__.py): DelayedScaling
// (fp8_format HYBRID, margin 0, amax_history_len 1024, amax_compute_algo "max"),
// Float8CurrentScaling (HYBRID, each call's own amax), MXFP8BlockScaling (E4M3, 1×32 blocks,
// E8M0 scales rounded up so that the block's largest value never clips), Float8BlockScaling and
// NVFP4BlockScaling (below). Every Linear's act,
// weight and grad point is on, rounded to nearest-even; the LM head and the attention operands
// stay off, as in the other FP8 presets.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "recipe/recipe.hpp"

// A namespace of its own: the recipe tests build as one unity file.
namespace altgrad::recipe::library_presets_test {
namespace {

using quant::MxScaleRule;
using quant::Scaling;

Recipe preset_recipe_of(const std::string& name) {
  return resolve_recipe(config::parse_config(
      "n_layer = 2\nn_head = 2\nn_embd = 32\nblock_size = 16\n[quant]\npreset = \"" + name + "\"\n", "test.toml"));
}

bool is_block_linear(const std::string& point) { return point.starts_with("h.") && point.find(':') != std::string::npos; }
bool is_grad(const std::string& point) { return point.ends_with(":grad"); }

TEST(LibraryPresets, TeDelayedIsDelayedScalingsDefaults) {
  std::size_t on = 0;
  for (const ResolvedPoint& p : preset_recipe_of("te-delayed").points) {
    if (!is_block_linear(p.name)) {
      EXPECT_FALSE(p.settings.enabled) << p.name;
      continue;
    }
    ++on;
    EXPECT_TRUE(p.settings.enabled) << p.name;
    EXPECT_EQ(p.settings.format_name, is_grad(p.name) ? "e5m2" : "e4m3") << p.name;
    EXPECT_EQ(p.settings.scaling, Scaling::delayed) << p.name;
    EXPECT_EQ(p.settings.history, 1024u) << p.name;
    EXPECT_EQ(p.settings.amax, quant::AmaxAlgorithm::max) << p.name;
    EXPECT_EQ(p.settings.margin, 0) << p.name;
    EXPECT_EQ(p.settings.rounding, format::Rounding::nearest_even) << p.name;
  }
  EXPECT_EQ(on, 2u * 4u * 3u);  // two blocks, four Linears each, three operands
}

TEST(LibraryPresets, TeCurrentIsFloat8CurrentScalingsDefaults) {
  std::size_t on = 0;
  for (const ResolvedPoint& p : preset_recipe_of("te-current").points) {
    if (!is_block_linear(p.name)) {
      EXPECT_FALSE(p.settings.enabled) << p.name;
      continue;
    }
    ++on;
    EXPECT_EQ(p.settings.format_name, is_grad(p.name) ? "e5m2" : "e4m3") << p.name;
    EXPECT_EQ(p.settings.scaling, Scaling::tensor) << p.name;
    EXPECT_EQ(p.settings.margin, 0) << p.name;
    EXPECT_EQ(p.settings.rounding, format::Rounding::nearest_even) << p.name;
  }
  EXPECT_EQ(on, 24u);
}

TEST(LibraryPresets, TeMxfp8IsMxfp8BlockScalingsDefaults) {
  std::size_t on = 0;
  for (const ResolvedPoint& p : preset_recipe_of("te-mxfp8").points) {
    if (!is_block_linear(p.name)) {
      EXPECT_FALSE(p.settings.enabled) << p.name;
      continue;
    }
    ++on;
    EXPECT_EQ(p.settings.format_name, "e4m3") << p.name;
    EXPECT_EQ(p.settings.scaling, Scaling::block) << p.name;
    EXPECT_EQ(p.settings.block, 32u) << p.name;
    EXPECT_EQ(p.settings.scale_format, quant::BlockScaleFormat::e8m0) << p.name;
    EXPECT_EQ(p.settings.scale_rule, MxScaleRule::round_up) << p.name;
    EXPECT_EQ(p.settings.rounding, format::Rounding::nearest_even) << p.name;
  }
  EXPECT_EQ(on, 24u);
}

bool is_weight(const std::string& point) { return point.ends_with(":weight"); }

// Float8BlockScaling: E4M3; FP32 power-of-two scales of 1 × 128 blocks, 128 × 128 tiles on weights.
TEST(LibraryPresets, TeFloat8BlockIsFloat8BlockScalingsDefaults) {
  std::size_t on = 0;
  for (const ResolvedPoint& p : preset_recipe_of("te-float8-block").points) {
    if (!is_block_linear(p.name)) {
      EXPECT_FALSE(p.settings.enabled) << p.name;
      continue;
    }
    ++on;
    EXPECT_EQ(p.settings.format_name, "e4m3") << p.name;
    EXPECT_EQ(p.settings.scaling, Scaling::block) << p.name;
    EXPECT_EQ(p.settings.block, 128u) << p.name;
    EXPECT_EQ(p.settings.scale_format, quant::BlockScaleFormat::fp32_pow2) << p.name;
    EXPECT_EQ(p.settings.tiles, is_weight(p.name)) << p.name;
    EXPECT_EQ(p.settings.rounding, format::Rounding::nearest_even) << p.name;
  }
  EXPECT_EQ(on, 24u);
}

// NVFP4BlockScaling: E2M1 with E4M3 scales per 16 under the tensor's FP32 scale; 16 × 16 weight
// tiles; gradients stochastically rounded with 8 random bits; a 16-point Hadamard transform with
// TE's signs on both operands of the weight-gradient GEMM, and no other.
TEST(LibraryPresets, TeNvfp4IsNvfp4BlockScalingsDefaults) {
  const Recipe r = preset_recipe_of("te-nvfp4");
  std::size_t on = 0;
  for (const ResolvedPoint& p : r.points) {
    if (!is_block_linear(p.name)) {
      EXPECT_FALSE(p.settings.enabled) << p.name;
      continue;
    }
    ++on;
    EXPECT_EQ(p.settings.format_name, "e2m1") << p.name;
    EXPECT_EQ(p.settings.scaling, Scaling::block) << p.name;
    EXPECT_EQ(p.settings.block, 16u) << p.name;
    EXPECT_EQ(p.settings.scale_format, quant::BlockScaleFormat::e4m3) << p.name;
    EXPECT_EQ(p.settings.tiles, is_weight(p.name)) << p.name;
    EXPECT_EQ(p.settings.rounding, is_grad(p.name) ? format::Rounding::stochastic : format::Rounding::nearest_even)
        << p.name;
    EXPECT_EQ(p.settings.sr_bits, is_grad(p.name) ? 8 : 32) << p.name;
  }
  EXPECT_EQ(on, 24u);
  EXPECT_TRUE(r.hadamard.transforms(Gemm::wgrad));
  EXPECT_FALSE(r.hadamard.transforms(Gemm::forward));
  EXPECT_FALSE(r.hadamard.transforms(Gemm::dgrad));
  EXPECT_EQ(r.hadamard.size, 16u);
  EXPECT_EQ(r.hadamard.signs, HadamardSigns::te);
}

// Each is also a name the recipe table and the error listing all presets know.
TEST(LibraryPresets, AreListed) {
  const auto names = preset_names();
  for (const char* name : {"te-delayed", "te-current", "te-mxfp8", "te-float8-block", "te-nvfp4"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

}  // namespace
}  // namespace altgrad::recipe::library_presets_test
