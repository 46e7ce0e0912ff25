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
#include "support/recipe_config.hpp"

// A namespace of its own: the recipe tests build as one unity file.
namespace altgrad::recipe::library_presets_test {
namespace {

using quant::MxScaleRule;
using quant::Scaling;

Recipe preset_recipe_of(const std::string& name) {
  return resolve_recipe(test_support::config_with("[quant]\npreset = \"" + name + "\"\n"));
}

bool is_block_linear(const std::string& point) { return point.starts_with("h.") && point.find(':') != std::string::npos; }
bool is_grad(const std::string& point) { return point.ends_with(":grad"); }
bool is_weight(const std::string& point) { return point.ends_with(":weight"); }

// Checks that every point outside the blocks' Linears is off, with no GEMM's copy of its own, hands
// each Linear point to `check`, and counts them: two blocks, four Linears each, three operands.
template <typename Check>
void for_each_linear_point(const Recipe& r, Check check) {
  std::size_t on = 0;
  for (const ResolvedPoint& p : r.points) {
    if (!is_block_linear(p.name)) {
      EXPECT_FALSE(p.settings.enabled || p.differs_by_gemm()) << p.name;
      continue;
    }
    ++on;
    EXPECT_TRUE(p.settings.enabled) << p.name;
    check(p);
  }
  EXPECT_EQ(on, 2u * 4u * 3u);
}

// A block-scaled point's element format, block and scale format.
void expect_blocks(const quant::PointSettings& s, const char* format, std::size_t block,
                   quant::BlockScaleFormat scale_format, const std::string& what) {
  EXPECT_EQ(s.format_name, format) << what;
  EXPECT_EQ(s.scaling, Scaling::block) << what;
  EXPECT_EQ(s.block, block) << what;
  EXPECT_EQ(s.scale_format, scale_format) << what;
}

TEST(LibraryPresets, TeDelayedIsDelayedScalingsDefaults) {
  for_each_linear_point(preset_recipe_of("te-delayed"), [](const ResolvedPoint& p) {
    const quant::PointSettings& s = p.settings;
    EXPECT_EQ(s.format_name, is_grad(p.name) ? "e5m2" : "e4m3") << p.name;
    EXPECT_EQ(s.scaling, Scaling::delayed) << p.name;
    EXPECT_EQ(s.history, 1024u) << p.name;
    EXPECT_EQ(s.amax, quant::AmaxAlgorithm::max) << p.name;
    EXPECT_EQ(s.margin, 0) << p.name;
    EXPECT_EQ(s.rounding, format::Rounding::nearest_even) << p.name;
  });
}

TEST(LibraryPresets, TeCurrentIsFloat8CurrentScalingsDefaults) {
  for_each_linear_point(preset_recipe_of("te-current"), [](const ResolvedPoint& p) {
    const quant::PointSettings& s = p.settings;
    EXPECT_EQ(s.format_name, is_grad(p.name) ? "e5m2" : "e4m3") << p.name;
    EXPECT_EQ(s.scaling, Scaling::tensor) << p.name;
    EXPECT_EQ(s.margin, 0) << p.name;
    EXPECT_EQ(s.rounding, format::Rounding::nearest_even) << p.name;
  });
}

TEST(LibraryPresets, TeMxfp8IsMxfp8BlockScalingsDefaults) {
  for_each_linear_point(preset_recipe_of("te-mxfp8"), [](const ResolvedPoint& p) {
    const quant::PointSettings& s = p.settings;
    expect_blocks(s, "e4m3", 32, quant::BlockScaleFormat::e8m0, p.name);
    EXPECT_EQ(s.scale_rule, MxScaleRule::round_up) << p.name;
    EXPECT_EQ(s.rounding, format::Rounding::nearest_even) << p.name;
  });
}

// Float8BlockScaling: E4M3; FP32 power-of-two scales of 1 × 128 blocks, 128 × 128 tiles on weights.
TEST(LibraryPresets, TeFloat8BlockIsFloat8BlockScalingsDefaults) {
  const Recipe r = preset_recipe_of("te-float8-block");
  for_each_linear_point(r, [](const ResolvedPoint& p) {
    const quant::PointSettings& s = p.settings;
    expect_blocks(s, "e4m3", 128, quant::BlockScaleFormat::fp32_pow2, p.name);
    EXPECT_EQ(s.tiles, is_weight(p.name)) << p.name;
    EXPECT_EQ(s.rounding, format::Rounding::nearest_even) << p.name;
  });
}

// NVFP4BlockScaling: E2M1 with E4M3 scales per 16 under the tensor's FP32 scale; 16 × 16 weight
// tiles; gradients stochastically rounded with 8 random bits; a 16-point Hadamard transform with
// TE's signs on both operands of the weight-gradient GEMM, and no other.
TEST(LibraryPresets, TeNvfp4IsNvfp4BlockScalingsDefaults) {
  const Recipe r = preset_recipe_of("te-nvfp4");
  for_each_linear_point(r, [](const ResolvedPoint& p) {
    const quant::PointSettings& s = p.settings;
    expect_blocks(s, "e2m1", 16, quant::BlockScaleFormat::e4m3, p.name);
    EXPECT_EQ(s.tiles, is_weight(p.name)) << p.name;
    EXPECT_EQ(s.rounding, is_grad(p.name) ? format::Rounding::stochastic : format::Rounding::nearest_even) << p.name;
    EXPECT_EQ(s.sr_bits, is_grad(p.name) ? 8 : 32) << p.name;
  });
  EXPECT_TRUE(r.hadamard.transforms(Gemm::wgrad));
  EXPECT_FALSE(r.hadamard.transforms(Gemm::forward));
  EXPECT_FALSE(r.hadamard.transforms(Gemm::dgrad));
  EXPECT_EQ(r.hadamard.size, 16u);
  EXPECT_EQ(r.hadamard.signs, HadamardSigns::te);
}

// Tseng et al. 2025's RHT + SR recipe: X and W in BF16 for the forward GEMM; dY, X's wgrad copy and
// W's dgrad copy in E2M1, blocks of 32, the floor rule's E8M0 scale with elements at 3/4,
// stochastic rounding; a 64-point seeded Hadamard transform on dgrad and wgrad. A 64-channel model
// with 64-token sequences, which 64 divides along every backward axis.
TEST(LibraryPresets, TsengMxfp4IsThePapersBackwardPass) {
  const Recipe r = resolve_recipe(config::parse_config(
      "n_layer = 2\nn_head = 2\nn_embd = 64\nblock_size = 64\n[quant]\npreset = \"tseng-mxfp4\"\n", "test.toml"));
  const auto expect_mxfp4_sr = [](const quant::PointSettings& s, const std::string& what) {
    EXPECT_TRUE(s.enabled) << what;
    expect_blocks(s, "e2m1", 32, quant::BlockScaleFormat::e8m0, what);
    EXPECT_EQ(s.scale_rule, MxScaleRule::three_quarters) << what;
    EXPECT_EQ(s.rounding, format::Rounding::stochastic) << what;
    EXPECT_EQ(s.sr_bits, 32) << what;
  };
  for_each_linear_point(r, [&](const ResolvedPoint& p) {
    if (is_grad(p.name)) {
      expect_mxfp4_sr(p.settings, p.name);
      EXPECT_FALSE(p.differs_by_gemm()) << p.name;
      return;
    }
    EXPECT_EQ(p.settings.format_name, "bf16,overflow=inf") << p.name;
    EXPECT_EQ(p.settings.scaling, Scaling::none) << p.name;
    const Gemm backward = is_weight(p.name) ? Gemm::dgrad : Gemm::wgrad;
    expect_mxfp4_sr(p.settings_for(backward), p.name + " " + std::string(gemm_name(backward)));
    EXPECT_EQ(p.settings_for(Gemm::forward), p.settings) << p.name;
  });
  EXPECT_FALSE(r.hadamard.transforms(Gemm::forward));
  EXPECT_TRUE(r.hadamard.transforms(Gemm::dgrad));
  EXPECT_TRUE(r.hadamard.transforms(Gemm::wgrad));
  EXPECT_EQ(r.hadamard.size, 64u);
  EXPECT_EQ(r.hadamard.signs, HadamardSigns::seeded);
}

// torchao's Float8LinearConfig.from_recipe_name (torchao/float8/config.py): "rowwise" casts X, W
// and dY to E4M3 with one scale per line along each GEMM's reduction axis, rounded down to a power
// of two (round_scales_to_power_of_2); "rowwise_with_gw_hp" keeps the forward GEMM and dY's dgrad
// copy so, casts W for dgrad at one power-of-two scale for the tensor, and leaves wgrad's X and dY
// in high precision.
void expect_axiswise_e4m3(const quant::PointSettings& s, const std::string& what) {
  EXPECT_TRUE(s.enabled) << what;
  expect_blocks(s, "e4m3", quant::kAxisBlock, quant::BlockScaleFormat::fp32_pow2, what);
  EXPECT_EQ(s.rounding, format::Rounding::nearest_even) << what;
  EXPECT_FALSE(s.tiles) << what;
}

TEST(LibraryPresets, TorchaoRowwiseIsAxiswiseE4m3WithPowerOfTwoScales) {
  for_each_linear_point(preset_recipe_of("torchao-rowwise"), [](const ResolvedPoint& p) {
    expect_axiswise_e4m3(p.settings, p.name);
    EXPECT_FALSE(p.differs_by_gemm()) << p.name;
  });
}

TEST(LibraryPresets, TorchaoRowwiseWithGwHpKeepsTheWeightGradientInHighPrecision) {
  for_each_linear_point(preset_recipe_of("torchao-rowwise-gw-hp"), [](const ResolvedPoint& p) {
    expect_axiswise_e4m3(p.settings_for(is_grad(p.name) ? Gemm::dgrad : Gemm::forward), p.name);
    if (is_weight(p.name)) {
      const quant::PointSettings& dgrad = p.settings_for(Gemm::dgrad);
      EXPECT_EQ(dgrad.format_name, "e4m3") << p.name;
      EXPECT_EQ(dgrad.scaling, Scaling::tensor) << p.name;
      EXPECT_EQ(dgrad.scale_format, quant::BlockScaleFormat::fp32_pow2) << p.name;
      return;
    }
    EXPECT_FALSE(p.settings_for(Gemm::wgrad).enabled) << p.name;
  });
}

// Each is also a name the recipe table and the error listing all presets know.
TEST(LibraryPresets, AreListed) {
  const auto names = preset_names();
  for (const char* name : {"te-delayed", "te-current", "te-mxfp8", "te-float8-block", "te-nvfp4", "tseng-mxfp4",
                           "torchao-rowwise", "torchao-rowwise-gw-hp"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

}  // namespace
}  // namespace altgrad::recipe::library_presets_test
