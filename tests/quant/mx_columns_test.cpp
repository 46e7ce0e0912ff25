// quantize_mx_columns, the column-wise MX copy, against the row-wise quantizer applied to the
// run-transposed matrix: transposing each run of rows turns blocks down a column into blocks along
// a row, and the documented word numbering (element (s·run + r, c) draws word s·run·cols + c·run + r)
// is the transposed matrix's own element order. So every value, every statistic and every
// stochastic rounding word must agree bit for bit, for any thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "determinism.hpp"
#include "format/parse.hpp"
#include "format/philox.hpp"
#include "quant/mx.hpp"

namespace altgrad::quant {
namespace {

using quant_test::bit_identical;
using quant_test::ScopedThreadCount;

// (rows, cols) → per run of `run` rows, that run's (cols, run) transpose, runs one after another.
std::vector<float> transpose_runs(const std::vector<float>& x, std::size_t rows, std::size_t cols, std::size_t run) {
  std::vector<float> t(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t segment = r / run, within = r % run;
    for (std::size_t c = 0; c < cols; ++c) t[segment * run * cols + c * run + within] = x[r * cols + c];
  }
  return t;
}

std::vector<float> untranspose_runs(const std::vector<float>& t, std::size_t rows, std::size_t cols, std::size_t run) {
  std::vector<float> x(t.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t segment = r / run, within = r % run;
    for (std::size_t c = 0; c < cols; ++c) x[r * cols + c] = t[segment * run * cols + c * run + within];
  }
  return x;
}

std::vector<float> graded(std::size_t n, std::size_t cols) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = format::philox_word(11, 0, i) / 4294967296.0;
    x[i] = static_cast<float>(std::ldexp(2.0 * u - 1.0, static_cast<int>((i / cols * 3 + i % cols) % 13) - 6));
  }
  return x;
}

void expect_same_stats(const MxStats& a, const MxStats& b) {
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.clipped_blocks, b.clipped_blocks);
  EXPECT_EQ(a.elements.count, b.elements.count);
  EXPECT_EQ(a.elements.overflow, b.elements.overflow);
  EXPECT_EQ(a.elements.underflow, b.elements.underflow);
  EXPECT_EQ(a.elements.amax, b.elements.amax);
}

struct Shape {
  std::size_t rows, cols, run, block;
};

TEST(QuantizeMxColumns, EqualsTheRowWiseQuantizerOnTheRunTransposedMatrix) {
  const format::Format e4m3 = format::make_format(format::parse_format("e4m3"));
  // Runs that are, and are not, multiples of the block; one column and many; one run and several.
  for (const Shape s : {Shape{40, 48, 40, 32}, Shape{80, 7, 40, 32}, Shape{96, 33, 32, 32}, Shape{64, 5, 64, 16},
                        Shape{3000, 3, 1000, 32}}) {
    for (const format::Rounding rounding : {format::Rounding::nearest_even, format::Rounding::stochastic}) {
      const std::vector<float> x = graded(s.rows * s.cols, s.cols);
      const MxOptions options{s.block, MxScaleRule::floor, rounding, 5, 9, 123};
      std::vector<float> want_t(x.size());
      const MxStats want = quantize_mx(e4m3, transpose_runs(x, s.rows, s.cols, s.run), want_t, s.run, options);
      for (const int threads : {1, 2}) {
        ScopedThreadCount pinned(threads);
        std::vector<float> got(x.size());
        const MxStats stats = quantize_mx_columns(e4m3, x, got, s.cols, s.run, options);
        EXPECT_TRUE(bit_identical(got, untranspose_runs(want_t, s.rows, s.cols, s.run)))
            << s.rows << "x" << s.cols << " run " << s.run << " threads " << threads;
        expect_same_stats(stats, want);
      }
    }
  }
}

// The column tiles the vector kernel cannot take go through the gathered row-wise kernel: a tile
// with Inf or NaN, a scale past the vector kernel's range (values near float32's max in e5m2,
// whose overflow gives Inf), blocks longer than its 64 rows, and roundings it does not have.
TEST(QuantizeMxColumns, TilesTheVectorKernelCannotTakeAgreeToo) {
  const Shape s{256, 37, 128, 32};
  std::vector<float> x = graded(s.rows * s.cols, s.cols);
  x[5 * s.cols + 3] = std::numeric_limits<float>::infinity();
  x[40 * s.cols + 20] = std::numeric_limits<float>::quiet_NaN();
  x[70 * s.cols + 35] = 3.0e38f;
  x[71 * s.cols + 35] = -3.0e38f;
  for (const char* format_name : {"e4m3", "e5m2"}) {
    const format::Format f = format::make_format(format::parse_format(format_name));
    for (const std::size_t block : {32, 128}) {
      for (const format::Rounding rounding :
           {format::Rounding::nearest_even, format::Rounding::stochastic, format::Rounding::toward_zero}) {
        for (const MxScaleRule rule : {MxScaleRule::floor, MxScaleRule::round_up}) {
          const MxOptions options{block, rule, rounding, 5, 9, 123};
          std::vector<float> want_t(x.size()), got(x.size());
          const MxStats want = quantize_mx(f, transpose_runs(x, s.rows, s.cols, s.run), want_t, s.run, options);
          const MxStats stats = quantize_mx_columns(f, x, got, s.cols, s.run, options);
          EXPECT_TRUE(bit_identical(got, untranspose_runs(want_t, s.rows, s.cols, s.run)))
              << format_name << " block " << block << " rounding " << static_cast<int>(rounding);
          expect_same_stats(stats, want);
        }
      }
    }
  }
}

// The vector kernel's column tiles build each lane's scale from its exponent and take a tile's
// amax from its columns' own: a column whose shared exponent is E8M0's smallest (its inverse scale
// 2^−127 is a subnormal float), and the largest value in a tile's upper eight lanes.
TEST(QuantizeMxColumns, ExtremeScalesAndTheUpperLanesAgreeToo) {
  const format::Format e4m3 = format::make_format(format::parse_format("e4m3"));
  const Shape s{64, 32, 64, 32};
  std::vector<float> x = graded(s.rows * s.cols, s.cols);
  for (std::size_t r = 0; r < s.rows; ++r) {
    const float tiny = std::ldexp(1.0f + static_cast<float>(r % 7) / 8.0f, -128);  // below FLT_MIN
    x[r * s.cols + 20] = r % 2 ? -tiny : tiny;
  }
  x[7 * s.cols + 13] = 1000.0f;
  const MxOptions options{s.block, MxScaleRule::floor, format::Rounding::nearest_even, 5, 9, 123};
  std::vector<float> want_t(x.size()), got(x.size());
  const MxStats want = quantize_mx(e4m3, transpose_runs(x, s.rows, s.cols, s.run), want_t, s.run, options);
  const MxStats stats = quantize_mx_columns(e4m3, x, got, s.cols, s.run, options);
  EXPECT_TRUE(bit_identical(got, untranspose_runs(want_t, s.rows, s.cols, s.run)));
  EXPECT_NE(got[3 * s.cols + 20], 0.0f);  // the tiny column is quantized, not flushed
  expect_same_stats(stats, want);
  EXPECT_EQ(stats.elements.amax, 1000.0f);
}

TEST(QuantizeMxColumns, RejectsARunThatDoesNotDivideTheRows) {
  const format::Format e4m3 = format::make_format(format::parse_format("e4m3"));
  std::vector<float> x(12), out(12);
  EXPECT_THROW(quantize_mx_columns(e4m3, x, out, 3, 3, MxOptions{}), std::invalid_argument);  // 4 rows
  EXPECT_THROW(quantize_mx_columns(e4m3, x, out, 5, 1, MxOptions{}), std::invalid_argument);  // 5 ∤ 12
}

}  // namespace
}  // namespace altgrad::quant
