// ErrorSums::skip (quant/stats.hpp): a pass without the two error sums writes the same bits and
// gathers every other statistic as the pass with them, for every named format and rounding, at
// per-tensor scales and under every block scale format, along rows and down columns, in place and
// not; its sums are 0. The pass that gathers, the default, has the sums of their definition
// (docs/formats.md, "Statistics"), which these tests take from its inputs and outputs.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "determinism.hpp"
#include "device_parity.hpp"
#include "quant/block_scale.hpp"
#include "quant/mx.hpp"
#include "quant/point_quantizer.hpp"
#include "quant/quantize.hpp"
#include "reference_stats.hpp"

namespace altgrad::quant_test {
namespace {

using format::Rounding;
using quant::BlockScaleFormat;
using quant::ErrorSums;

constexpr Rounding kEveryRounding[] = {Rounding::nearest_even,    Rounding::nearest_away,    Rounding::toward_zero,
                                       Rounding::toward_positive, Rounding::toward_negative, Rounding::odd,
                                       Rounding::stochastic,      Rounding::stochastic_equal};

// Σ (x − y)² and Σ x² over finite x, an output that is not finite being an infinite error, in long
// double and in element order: the definition the gathered sums are held to.
struct DefinedSums {
  long double error = 0.0L, input = 0.0L;
};

DefinedSums defined_sums(const std::vector<float>& x, const std::vector<float>& y) {
  DefinedSums s;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) continue;
    const long double e = static_cast<long double>(x[i]) - static_cast<long double>(y[i]);
    s.error += std::isfinite(y[i]) ? e * e : std::numeric_limits<long double>::infinity();
    s.input += static_cast<long double>(x[i]) * static_cast<long double>(x[i]);
  }
  return s;
}

// `skipped`, of a pass under ErrorSums::skip, against `gathered`, of the same pass with the sums:
// every count and the amax equal, both sums 0; and the gathered sums those of their definition.
void expect_sums_alone_differ(const quant::QuantStats& skipped, const quant::QuantStats& gathered,
                              const DefinedSums& defined, const std::string& where) {
  EXPECT_EQ(skipped.count, gathered.count) << where;
  EXPECT_EQ(skipped.overflow, gathered.overflow) << where;
  EXPECT_EQ(skipped.underflow, gathered.underflow) << where;
  EXPECT_EQ(skipped.nan_inputs, gathered.nan_inputs) << where;
  EXPECT_EQ(skipped.inf_inputs, gathered.inf_inputs) << where;
  EXPECT_EQ(skipped.zero_inputs, gathered.zero_inputs) << where;
  EXPECT_EQ(std::bit_cast<std::uint32_t>(skipped.amax), std::bit_cast<std::uint32_t>(gathered.amax)) << where;
  EXPECT_EQ(skipped.sum_sq_error, 0.0) << where;
  EXPECT_EQ(skipped.sum_sq_input, 0.0) << where;
  EXPECT_EQ(skipped.relative_error(), 0.0) << where;
  EXPECT_TRUE(close_relative(gathered.sum_sq_error, defined.error, 1e-9)) << "sum_sq_error, " << where;
  EXPECT_TRUE(close_relative(gathered.sum_sq_input, defined.input, 1e-9)) << "sum_sq_input, " << where;
}

void expect_block_sums_alone_differ(const quant::MxStats& skipped, const quant::MxStats& gathered,
                                    const DefinedSums& defined, const std::string& where) {
  expect_sums_alone_differ(skipped.elements, gathered.elements, defined, where);
  EXPECT_EQ(skipped.blocks, gathered.blocks) << where;
  EXPECT_EQ(skipped.clipped_blocks, gathered.clipped_blocks) << where;
}

// One per-tensor case both ways, out of place (with a code histogram where the format has one) and
// in place.
void check_per_tensor(const format::Format& f, const std::string& name, Rounding rounding, float scale,
                      const std::vector<float>& x) {
  const std::string where = describe_case(name, rounding, "scale " + std::to_string(scale));
  quant::QuantizeOptions gather{rounding, scale, 11, 3, 5, {}};
  quant::QuantizeOptions skip = gather;
  skip.error_sums = ErrorSums::skip;
  const bool codes = f.width <= 8;
  std::vector<std::uint64_t> gathered_codes(codes ? f.code_count() : 0), skipped_codes(gathered_codes.size());
  gather.code_histogram = gathered_codes;
  skip.code_histogram = skipped_codes;
  std::vector<float> gathered(x.size()), skipped(x.size());
  const quant::QuantStats g = quant::quantize(f, x, gathered, gather);
  const quant::QuantStats s = quant::quantize(f, x, skipped, skip);
  EXPECT_TRUE(bit_identical(skipped, gathered)) << where;
  EXPECT_EQ(skipped_codes, gathered_codes) << where;
  expect_sums_alone_differ(s, g, defined_sums(x, gathered), where);

  skip.code_histogram = {};
  std::vector<float> in_place = x;
  const quant::QuantStats p = quant::quantize_in_place(f, in_place, skip);
  EXPECT_TRUE(bit_identical(in_place, gathered)) << where << ", in place";
  expect_sums_alone_differ(p, g, defined_sums(x, gathered), where + ", in place");
}

TEST(ErrorSums, PerTensorPassesDifferInTheSumsAloneForEveryFormatRoundingAndScale) {
  for (const std::string& name : parity_format_names()) {
    const format::Format f = parity_format(name);
    for (Rounding rounding : kEveryRounding) {
      for (float scale : kParityScales) check_per_tensor(f, name, rounding, scale, tensor_inputs(f, scale, 2111, 7));
    }
  }
}

// Several chunks of the threaded pass (16 tiles each), whose partial statistics are merged.
TEST(ErrorSums, PerTensorPassesOverManyChunksDifferInTheSumsAlone) {
  for (const char* name : {"e4m3", "e5m2", "e7m0"}) {
    const format::Format f = parity_format(name);
    for (Rounding rounding : {Rounding::nearest_even, Rounding::stochastic}) {
      check_per_tensor(f, name, rounding, 0.37f, tensor_inputs(f, 0.37f, 4 * 16384 + 77, 9));
    }
  }
}

// Rows of `row_length` (blocks of 32, a ragged last block where 32 does not divide it), or the
// column-wise copy of a `cols`-wide matrix in runs of `run` rows.
struct BlockLayout {
  bool columns;
  std::size_t width, run, rows;
};
constexpr BlockLayout kBlockLayouts[] = {{false, 96, 0, 24}, {false, 80, 0, 24}, {true, 48, 64, 64}, {true, 40, 40, 80}};

std::string describe_layout(const BlockLayout& l, BlockScaleFormat scale_format) {
  return std::string(l.columns ? "columns " : "rows ") + std::to_string(l.width) + ", run " + std::to_string(l.run) +
         ", scale format " + std::string(quant::scale_format_name(scale_format));
}

quant::MxStats quantize_layout(const format::Format& f, const BlockLayout& l, const std::vector<float>& in,
                               std::vector<float>& out, const quant::MxOptions& options) {
  if (l.columns) return quant::quantize_mx_columns(f, in, out, l.width, l.run, options);
  return quant::quantize_mx(f, in, out, l.width, options);
}

// One block-scaled case both ways.
void check_blocks(const format::Format& f, const std::string& name, Rounding rounding, BlockScaleFormat scale_format,
                  const BlockLayout& layout) {
  const std::string where = describe_case(name, rounding, describe_layout(layout, scale_format));
  const std::vector<float> x = mx_inputs(f, layout.width * layout.rows, 13);
  quant::MxOptions gather{32, quant::MxScaleRule::floor, rounding, 17, 2, 64, scale_format};
  quant::MxOptions skip = gather;
  skip.error_sums = ErrorSums::skip;
  std::vector<float> gathered(x.size()), skipped(x.size());
  const quant::MxStats g = quantize_layout(f, layout, x, gathered, gather);
  const quant::MxStats s = quantize_layout(f, layout, x, skipped, skip);
  EXPECT_TRUE(bit_identical(skipped, gathered)) << where;
  expect_block_sums_alone_differ(s, g, defined_sums(x, gathered), where);
}

// MX (E8M0 scales) on every format under the roundings of the vector kernels (training's).
TEST(ErrorSums, MxPassesDifferInTheSumsAloneForEveryFormat) {
  for (const std::string& name : parity_format_names()) {
    const format::Format f = parity_format(name);
    for (Rounding rounding : {Rounding::nearest_even, Rounding::stochastic}) {
      for (const BlockLayout& layout : kBlockLayouts) check_blocks(f, name, rounding, BlockScaleFormat::e8m0, layout);
    }
  }
}

// Every block scale format: E8M0 under a rounding of the portable kernel too, FP32, FP32 power of
// two and NVFP4's E4M3 (quant/block_scale.hpp), whose elements go through the per-tensor kernels
// (FP32) or one at a time (E4M3).
TEST(ErrorSums, EveryBlockScaleFormatDiffersInTheSumsAlone) {
  for (const char* name : {"e4m3", "e5m2", "e2m1", "e3m2", "bf16"}) {
    const format::Format f = parity_format(name);
    for (Rounding rounding : {Rounding::nearest_even, Rounding::stochastic, Rounding::toward_zero}) {
      for (BlockScaleFormat scale_format : {BlockScaleFormat::e8m0, BlockScaleFormat::fp32, BlockScaleFormat::fp32_pow2,
                                            BlockScaleFormat::e4m3}) {
        for (const BlockLayout& layout : kBlockLayouts) check_blocks(f, name, rounding, scale_format, layout);
      }
    }
  }
}

// MX's E8M0 codes are the same either way.
TEST(ErrorSums, MxScaleCodesDoNotDependOnTheSums) {
  const format::Format f = parity_format("e4m3");
  const std::vector<float> x = mx_inputs(f, 64 * 96, 21);
  quant::MxOptions gather{32, quant::MxScaleRule::round_up, Rounding::nearest_even, 0, 0, 0};
  quant::MxOptions skip = gather;
  skip.error_sums = ErrorSums::skip;
  std::vector<std::uint8_t> gathered_codes(64 * 3), skipped_codes(64 * 3);
  std::vector<float> gathered(x.size()), skipped(x.size());
  (void)quant::quantize_mx(f, x, gathered, 96, gather, gathered_codes);
  (void)quant::quantize_mx(f, x, skipped, 96, skip, skipped_codes);
  EXPECT_EQ(skipped_codes, gathered_codes);
  EXPECT_TRUE(bit_identical(skipped, gathered));
}

quant::PointSettings point_settings(quant::Scaling scaling) {
  quant::PointSettings s;
  s.enabled = true;
  s.scaling = scaling;
  s.rounding = Rounding::stochastic;
  return s;
}

// A step begun without the sums quantizes as one begun with them, row-wise and column-wise, and
// the next step's default gathers them again; frozen calls follow the step's choice.
TEST(ErrorSums, APointQuantizerGathersTheSumsOfTheStepsThatAskForThem) {
  const format::Format f = parity_format("e4m3");
  const std::vector<float> x = mx_inputs(f, 64 * 96, 31);
  for (quant::Scaling scaling : {quant::Scaling::tensor, quant::Scaling::block}) {
    const std::string where(quant::scaling_name(scaling));
    quant::PointQuantizer with(point_settings(scaling), 5, 2), without(point_settings(scaling), 5, 2);
    std::vector<float> a(x.size()), b(x.size());
    with.begin_step(7, ErrorSums::gather);
    without.begin_step(7, ErrorSums::skip);
    (void)with.apply(x, a, 96);
    (void)without.apply(x, b, 96);
    EXPECT_TRUE(bit_identical(b, a)) << where;
    expect_sums_alone_differ(without.step_stats().values, with.step_stats().values, defined_sums(x, a), where);
    EXPECT_EQ(without.step_stats().clipped_blocks, with.step_stats().clipped_blocks) << where;

    const quant::OperandLayout column_copy{96, true, 0};
    (void)with.apply(x, a, column_copy);
    (void)without.apply(x, b, column_copy);
    EXPECT_TRUE(bit_identical(b, a)) << where << ", column-wise";
    EXPECT_EQ(without.column_stats().values.count, with.column_stats().values.count) << where;
    EXPECT_EQ(without.column_stats().clipped_blocks, with.column_stats().clipped_blocks) << where;
    EXPECT_EQ(without.column_stats().values.sum_sq_input, 0.0) << where;

    EXPECT_EQ(without.apply(x, b, 96, true).values.sum_sq_input, 0.0) << where << ", frozen";
    without.end_step();
    without.begin_step(8);
    EXPECT_GT(without.apply(x, b, 96).values.sum_sq_input, 0.0) << where << ", the next step";
  }
}

}  // namespace
}  // namespace altgrad::quant_test
