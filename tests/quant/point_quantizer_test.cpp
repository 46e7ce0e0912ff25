// A quantization point across training steps: which scale each step uses, what the history
// records, stochastic bits independent of how a step's elements are split into calls, frozen
// (evaluation) calls that change nothing, and the statistics of the step.
#include "quant/point_quantizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "quant/mx.hpp"

namespace altgrad::quant {
namespace {

PointSettings settings(const char* format, Scaling scaling, format::Rounding rounding = format::Rounding::nearest_even) {
  PointSettings s;
  s.enabled = true;
  s.format_name = format;
  s.format = format::make_format(format::parse_format(format));
  s.scaling = scaling;
  s.rounding = rounding;
  s.history = 4;
  return s;
}

std::vector<float> ramp(std::size_t n, float amax) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = amax * (static_cast<float>(i % 97) / 48.0f - 1.0f);
  return x;
}

float expected_scale(float amax) { return static_cast<float>(448.0 / static_cast<double>(amax)); }

TEST(PointQuantizer, DelayedScaleOfAStepComesFromEarlierStepsLargestAmax) {
  PointQuantizer point(settings("e4m3", Scaling::delayed), 1, 0);
  std::vector<float> out(970);
  point.begin_step(0);
  EXPECT_EQ(point.step_stats().scale, 1.0f);  // no history yet
  point.apply(ramp(970, 3.0f), out, 97);
  point.apply(ramp(970, 5.0f), out, 97);  // a second micro-batch of the same step
  point.end_step();
  point.begin_step(1);
  EXPECT_EQ(point.step_stats().scale, expected_scale(5.0f));
  point.apply(ramp(970, 2.0f), out, 97);
  point.end_step();
  point.begin_step(2);
  EXPECT_EQ(point.step_stats().scale, expected_scale(5.0f));  // max over the history window
  EXPECT_EQ(point.delayed()->history(), (std::vector<float>{5.0f, 2.0f}));
  // The quantized values use that scale: x̂ = Q(x · s) / s.
  const std::vector<float> x = ramp(970, 2.0f);
  point.apply(x, out, 97);
  const format::Format f = format::make_format(format::parse_format("e4m3"));
  const float s = expected_scale(5.0f);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float q = format::decode(f, format::encode(f, format::Rounding::nearest_even, x[i] * s));
    ASSERT_EQ(out[i], q / s) << i;
  }
}

TEST(PointQuantizer, StochasticBitsDoNotDependOnHowAStepIsSplitIntoCalls) {
  const PointSettings s = settings("e5m2", Scaling::none, format::Rounding::stochastic);
  const std::vector<float> x = ramp(4096, 1.0f);
  PointQuantizer whole(s, 7, 3), halves(s, 7, 3);
  std::vector<float> a(x.size()), b(x.size());
  whole.begin_step(5);
  whole.apply(x, a, 64);
  halves.begin_step(5);
  halves.apply(std::span(x).first(1000), std::span(b).first(1000), 64);
  halves.apply(std::span(x).subspan(1000), std::span(b).subspan(1000), 64);
  EXPECT_EQ(a, b);
  PointQuantizer next_step(s, 7, 3);
  next_step.begin_step(6);
  next_step.apply(x, b, 64);
  EXPECT_NE(a, b);  // a new step draws new bits
}

TEST(PointQuantizer, FrozenCallsChangeNoStateOrStatistics) {
  PointQuantizer point(settings("e4m3", Scaling::delayed), 1, 0);
  std::vector<float> out(970);
  point.begin_step(0);
  point.apply(ramp(970, 3.0f), out, 97);
  point.end_step();
  point.begin_step(1);
  point.apply(ramp(970, 100.0f), out, 97, /*frozen=*/true);
  EXPECT_EQ(point.step_stats().calls, 0u);
  point.end_step();
  EXPECT_EQ(point.delayed()->history(), (std::vector<float>{3.0f}));
}

// Evaluation between steps (validation during training, `altgrad eval` of a checkpoint) must use
// the scale the next step will use: after a step with amax 2, that is 448 / 2 = 224, not the ended
// step's scale (1, the first step's) and not 1 after a restore. Values worked by hand on E4M3's grid:
// 0.0107 · 224 = 2.3968 rounds to 2.5 (step 0.25 in [2, 4)), so x̂ = 2.5 / 224; at scale 1 it would be
// the subnormal 5 · 2^-9 = 0.009765625.
TEST(PointQuantizer, FrozenCallsUseTheScaleOfTheNextStep) {
  PointQuantizer point(settings("e4m3", Scaling::delayed), 1, 0);
  std::vector<float> out(2);
  point.begin_step(0);
  point.apply(std::vector<float>{2.0f, -1.0f}, out, 2);
  point.end_step();
  point.apply(std::vector<float>{0.0107f, 0.0f}, out, 2, /*frozen=*/true);
  EXPECT_EQ(out[0], 2.5f / 224.0f);

  PointQuantizer restored(settings("e4m3", Scaling::delayed), 1, 0);
  const std::vector<float> history{2.0f};
  restored.delayed()->restore(history, 224.0f);
  restored.apply(std::vector<float>{0.0107f, 0.0f}, out, 2, /*frozen=*/true);
  EXPECT_EQ(out[0], 2.5f / 224.0f);
  restored.delayed()->restore(history, 1.0f);
  restored.apply(std::vector<float>{0.0107f, 0.0f}, out, 2, /*frozen=*/true);
  EXPECT_EQ(out[0], 0.009765625f);
}

TEST(PointQuantizer, TensorScalingUsesTheCallsOwnAmax) {
  PointQuantizer point(settings("e4m3", Scaling::tensor), 1, 0);
  std::vector<float> out(970);
  point.begin_step(0);
  point.apply(ramp(970, 0.01f), out, 97);
  EXPECT_EQ(point.step_stats().scale, expected_scale(0.01f));
  EXPECT_EQ(point.step_stats().values.overflow, 0u);
}

TEST(PointQuantizer, BlockScalingMatchesTheMxQuantizer) {
  PointSettings s = settings("e4m3", Scaling::block);
  PointQuantizer point(s, 1, 0);
  const std::vector<float> x = ramp(64 * 10, 7.0f);
  std::vector<float> out(x.size()), reference(x.size());
  point.begin_step(0);
  point.apply(x, out, 64);
  const MxStats mx = quantize_mx(s.format, x, reference, 64, MxOptions{});
  EXPECT_EQ(out, reference);
  EXPECT_EQ(point.step_stats().blocks, mx.blocks);
  EXPECT_TRUE(std::isnan(point.step_stats().scale));
}

TEST(PointQuantizer, StepStatisticsMatchADirectCount) {
  PointQuantizer point(settings("e4m3", Scaling::none), 1, 0);
  const std::vector<float> x = {1000.0f, -500.0f, 1e-4f, 0.0f, 1.0f, std::nanf(""), 0.3f, -2e-4f};
  std::vector<float> out(x.size());
  point.begin_step(0);
  point.collect_codes(true);
  point.apply(x, out, x.size());
  const QuantStats& s = point.step_stats().values;
  EXPECT_EQ(s.count, 8u);
  EXPECT_EQ(s.overflow, 2u);   // |x| > 448
  EXPECT_EQ(s.underflow, 2u);  // nonzero below half the smallest subnormal, 2^-10
  EXPECT_EQ(s.nan_inputs, 1u);
  EXPECT_EQ(s.amax, 1000.0f);
  std::uint64_t codes = 0;
  for (const auto c : point.code_histogram()) codes += c;
  EXPECT_EQ(codes, 8u);
}

// One causal 4 × 4 tile of attention probabilities, counted by hand: 10 entries a query can attend
// to, 6 masked zeros. On E4M3 without scaling, 1e-4 flushes to zero (below half of 2^-9); 0.3 rounds
// to 0.3125 and 0.7 to 0.6875. Codes used by attendable entries: 1, 0.5, 0, 0.3125, 0.6875, 0.25.
const std::vector<float> kCausalTile{1.0f,  0.0f, 0.0f, 0.0f,  0.5f,  0.5f,  0.0f,  0.0f,
                                     1e-4f, 0.3f, 0.7f, 0.0f,  0.25f, 0.25f, 0.25f, 0.25f};

const OperandLayout kCausalLayout{4, false, 0, true};

TEST(PointQuantizer, CausalLayoutCountsOnlyAttendableEntries) {
  const format::Format f = format::make_format(format::parse_format("e4m3"));
  PointQuantizer point(settings("e4m3", Scaling::none), 1, 0);
  point.collect_codes(true);
  std::vector<float> out(16);
  const PointStats call = point.apply(kCausalTile, out, kCausalLayout);
  EXPECT_EQ(call.values.count, 10u);
  EXPECT_EQ(call.values.underflow, 1u);
  EXPECT_DOUBLE_EQ(call.values.underflow_fraction(), 0.1);
  EXPECT_EQ(point.step_stats().values.count, 10u);
  std::uint64_t total = 0, used = 0;
  for (const std::uint64_t n : point.code_histogram()) {
    total += n;
    used += n > 0 ? 1 : 0;
  }
  EXPECT_EQ(total, 10u);
  EXPECT_EQ(used, 6u);
  EXPECT_EQ(point.code_histogram()[format::encode(f, format::Rounding::nearest_even, 0.0f)], 1u);  // the flushed 1e-4
  EXPECT_EQ(out[9], 0.3125f);
  EXPECT_EQ(out[10], 0.6875f);

  // The same tile counted densely, as every other operand is: the 6 masked zeros count too.
  PointQuantizer dense(settings("e4m3", Scaling::none), 1, 0);
  EXPECT_EQ(dense.apply(kCausalTile, out, 4).values.count, 16u);
}

TEST(PointQuantizer, CausalLayoutLeavesWhollyMaskedBlocksOut) {
  PointSettings s = settings("e4m3", Scaling::block);
  s.block = 2;  // rows 0 and 1 have their second block wholly masked
  PointQuantizer point(s, 1, 0);
  std::vector<float> out(16);
  const PointStats call = point.apply(kCausalTile, out, kCausalLayout);
  EXPECT_EQ(call.values.count, 10u);
  EXPECT_EQ(call.blocks, 6u);
}

TEST(PointQuantizer, CausalColumnWiseCopyLeavesWhollyMaskedBlocksOut) {
  PointSettings s = settings("e4m3", Scaling::block);
  s.block = 2;  // down the queries: keys 2 and 3 have their first block (queries 0, 1) wholly masked
  PointQuantizer point(s, 1, 0);
  std::vector<float> out(16);
  const PointStats call = point.apply(kCausalTile, out, OperandLayout{4, true, 0, true});
  EXPECT_EQ(call.values.count, 10u);
  EXPECT_EQ(call.blocks, 6u);
  EXPECT_EQ(point.column_stats().blocks, 6u);
}

TEST(PointQuantizer, RejectsADisabledPoint) {
  EXPECT_THROW(PointQuantizer(PointSettings{}, 1, 0), SettingsError);
}

}  // namespace
}  // namespace altgrad::quant
