// 2-D tiles (quant/tiles.hpp) against references written here from the definitions: each tile's
// scale from its own largest finite |x| (E8M0 by the OCP floor or the round-up rule; FP32 and FP32
// power of two multipliers; NVFP4's E4M3 scale under the FP32 scale of the whole matrix), its
// elements rounded on the grid of reference_grid.hpp. Ragged edges at both tile sides; the matrix
// and its transpose get the same codes; stochastic rounding draws each element's row-major word;
// statistics and bits do not depend on the thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "format/codec.hpp"
#include "format/philox.hpp"
#include "quant/tiles.hpp"
#include "reference_grid.hpp"
#include "test_tensors.hpp"

// A namespace of its own: the quant tests build as one unity file.
namespace altgrad::quant_test::tiles {
namespace {

using format::Rounding;
using quant::BlockScaleFormat;
using quant::MxOptions;
using quant::MxScaleRule;

struct Matrix {
  std::size_t rows, cols;
  std::vector<float> values;
};

// Magnitudes spread over 2^−12 .. 2^12 with a different range per tile row, zeros in one tile.
Matrix spread_matrix(std::size_t rows, std::size_t cols, std::uint64_t seed) {
  TensorRng rng(seed);
  Matrix m{rows, cols, std::vector<float>(rows * cols)};
  for (std::size_t r = 0; r < rows; ++r) {
    const float magnitude = std::ldexp(1.0f, static_cast<int>(r / 16 * 5 % 25) - 12);
    for (std::size_t c = 0; c < cols; ++c) m.values[r * cols + c] = rng.log_uniform(-3, 1) * magnitude;
  }
  for (std::size_t r = 0; r < std::min<std::size_t>(rows, 16); ++r) {
    for (std::size_t c = 16; c < std::min<std::size_t>(cols, 32); ++c) m.values[r * cols + c] = 0.0f;
  }
  return m;
}

Matrix transposed(const Matrix& m) {
  Matrix t{m.cols, m.rows, std::vector<float>(m.values.size())};
  for (std::size_t r = 0; r < m.rows; ++r) {
    for (std::size_t c = 0; c < m.cols; ++c) t.values[c * m.rows + r] = m.values[r * m.cols + c];
  }
  return t;
}

// The elements of the tile at (row, col), row-major within it.
std::vector<std::size_t> tile_indices(const Matrix& m, std::size_t row, std::size_t col, std::size_t side) {
  std::vector<std::size_t> at;
  for (std::size_t r = row; r < std::min(m.rows, row + side); ++r) {
    for (std::size_t c = col; c < std::min(m.cols, col + side); ++c) at.push_back(r * m.cols + c);
  }
  return at;
}

float amax_of(const Matrix& m, const std::vector<std::size_t>& at) {
  float amax = 0.0f;
  for (const std::size_t i : at) amax = std::max(amax, std::fabs(m.values[i]));
  return amax;
}

long double rne_saturated(const RefGrid& g, long double x) {
  return std::copysign(std::min(round_nearest_even(g, std::fabs(x)), g.max_finite), x);
}

// E8M0: k from the rule's definition (docs/formats.md), elements RNE(x · 2^−k) · 2^k.
int reference_exponent(const RefGrid& g, float amax, MxScaleRule rule) {
  if (!(amax > 0.0f)) return 0;
  int k = floor_log2(amax) - floor_log2(g.max_finite);  // floor: OCP
  if (rule == MxScaleRule::round_up) {
    k = -400;
    while (std::ldexp(static_cast<long double>(amax), -k) > g.max_finite) ++k;
  }
  return std::clamp(k, -127, 127);
}

// The reference copy of every tile, as the scale format defines it.
std::vector<float> reference_tiles(const RefGrid& g, const Matrix& m, const MxOptions& o) {
  std::vector<float> out(m.values.size());
  const float tensor_amax = amax_of(m, tile_indices(m, 0, 0, std::max(m.rows, m.cols)));
  const long double range = 448.0L * g.max_finite;  // NVFP4: E4M3's max times the element's
  for (std::size_t row = 0; row < m.rows; row += o.block_size) {
    for (std::size_t col = 0; col < m.cols; col += o.block_size) {
      const std::vector<std::size_t> at = tile_indices(m, row, col, o.block_size);
      const float amax = amax_of(m, at);
      for (const std::size_t i : at) {
        const float x = m.values[i];
        switch (o.scale_format) {
          case BlockScaleFormat::e8m0: {
            const int k = reference_exponent(g, amax, o.rule);
            out[i] = static_cast<float>(std::ldexp(rne_saturated(g, std::ldexp(static_cast<long double>(x), -k)), k));
            break;
          }
          case BlockScaleFormat::fp32:
          case BlockScaleFormat::fp32_pow2: {
            float s = reference_scale(g.max_finite, amax, 0);
            if (o.scale_format == BlockScaleFormat::fp32_pow2) s = std::ldexp(1.0f, floor_log2(s));
            out[i] = static_cast<float>(rne_saturated(g, x * s) / s);
            break;
          }
          case BlockScaleFormat::e4m3: {
            // NVFP4 in the report's FP32 operation order: S_enc = fl(range / A); the block's E4M3
            // scale s_b = E4M3(fl(amax · fl(S_enc · fl(1 / max)))); elements Q(fl(x · fl(1 / fl(s_b · fl(1 / S_enc)))))
            // read back as q · s_b · A / range, rounded once.
            const float encode = static_cast<float>(range / tensor_amax);
            const float per_amax = encode * (1.0f / static_cast<float>(g.max_finite));
            const float s_b = static_cast<float>(rne_saturated(kE4m3, amax * per_amax));
            // A flushed tile (s_b = 0): factor FLT_MAX, codes saturate, values 0.
            const float decode = s_b * (1.0f / encode);
            const float factor = decode > 0.0f ? std::min(1.0f / decode, std::numeric_limits<float>::max())
                                               : std::numeric_limits<float>::max();
            const long double q = rne_saturated(g, std::clamp(x * factor, -std::numeric_limits<float>::max(),
                                                              std::numeric_limits<float>::max()));
            out[i] = static_cast<float>(q * s_b * tensor_amax / range);
            break;
          }
        }
      }
    }
  }
  return out;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(format::float_bits(got[i]), format::float_bits(want[i]))
        << what << ", element " << i << std::hexfloat << ": " << got[i] << " vs " << want[i];
  }
}

struct TileCase {
  const RefGrid* grid;
  BlockScaleFormat scale_format;
  MxScaleRule rule;
  std::size_t side;
};

// 16 × 16 E8M0 (floor and round-up), FP32 and FP32 power-of-two 128 × 128, NVFP4's E2M1 under
// E4M3 scales 16 × 16; shapes with ragged edges at both sides.
constexpr TileCase kCases[] = {{&kE4m3, BlockScaleFormat::e8m0, MxScaleRule::floor, 16},
                               {&kE4m3, BlockScaleFormat::e8m0, MxScaleRule::round_up, 16},
                               {&kE4m3, BlockScaleFormat::fp32, MxScaleRule::floor, 128},
                               {&kE4m3, BlockScaleFormat::fp32_pow2, MxScaleRule::floor, 128},
                               {&kE2m1, BlockScaleFormat::e4m3, MxScaleRule::floor, 16}};

MxOptions options_for(const TileCase& t) {
  MxOptions o;
  o.block_size = t.side;
  o.rule = t.rule;
  o.scale_format = t.scale_format;
  return o;
}

std::string describe(const TileCase& t, const Matrix& m) {
  return std::string(t.grid->name) + " " + std::to_string(t.side) + "x" + std::to_string(t.side) + " tiles, scale " +
         std::to_string(static_cast<int>(t.scale_format)) + ", " + std::to_string(m.rows) + "x" + std::to_string(m.cols);
}

TEST(Tiles, EveryTileAtItsOwnScaleWithRaggedEdges) {
  for (const TileCase& t : kCases) {
    for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{40, 72}, {130, 200}, {16, 16}}) {
      const Matrix m = spread_matrix(rows, cols, 5 + rows);
      std::vector<float> out(m.values.size());
      const quant::MxStats stats = quant::quantize_tiles(load(*t.grid), m.values, out, cols, options_for(t));
      expect_same_bits(out, reference_tiles(*t.grid, m, options_for(t)), describe(t, m));
      const std::size_t tiles = ((rows + t.side - 1) / t.side) * ((cols + t.side - 1) / t.side);
      EXPECT_EQ(stats.blocks, tiles) << describe(t, m);
      EXPECT_EQ(stats.elements.count, rows * cols) << describe(t, m);
      EXPECT_EQ(stats.elements.zero_inputs, static_cast<std::uint64_t>(std::count(m.values.begin(), m.values.end(), 0.0f)));
    }
  }
}

// What makes tiles 2-D: W and Wᵀ share every scale, so their copies are each other's transpose.
TEST(Tiles, TheTransposeGetsTheTransposedCopy) {
  for (const TileCase& t : kCases) {
    const Matrix m = spread_matrix(40, 72, 9);
    const Matrix mt = transposed(m);
    std::vector<float> out(m.values.size()), out_t(m.values.size());
    (void)quant::quantize_tiles(load(*t.grid), m.values, out, m.cols, options_for(t));
    (void)quant::quantize_tiles(load(*t.grid), mt.values, out_t, mt.cols, options_for(t));
    expect_same_bits(transposed(Matrix{m.rows, m.cols, out}).values, out_t, describe(t, m) + ", transposed");
  }
}

// Stochastic rounding: element (r, c) rounds with the word of its row-major index, at its tile's
// E8M0 scale.
TEST(Tiles, StochasticRoundingDrawsEachElementsRowMajorWord) {
  const Matrix m = spread_matrix(40, 72, 13);
  MxOptions o = options_for(kCases[0]);
  o.rounding = Rounding::stochastic;
  o.seed = 77;
  o.stream = 3;
  o.first_index = 1000;
  std::vector<float> out(m.values.size());
  (void)quant::quantize_tiles(load(kE4m3), m.values, out, m.cols, o);
  const format::Format f = load(kE4m3);
  for (std::size_t row = 0; row < m.rows; row += 16) {
    for (std::size_t col = 0; col < m.cols; col += 16) {
      const std::vector<std::size_t> at = tile_indices(m, row, col, 16);
      const int k = reference_exponent(kE4m3, amax_of(m, at), MxScaleRule::floor);
      for (const std::size_t i : at) {
        const float scaled = std::ldexp(m.values[i], -k);
        const float q = format::round_value(f, Rounding::stochastic, scaled, format::philox_word(77, 3, 1000 + i));
        ASSERT_EQ(out[i], std::ldexp(q, k)) << "element " << i;
      }
    }
  }
}

TEST(Tiles, OneAndTwoThreadsGiveTheSameBitsAndStatistics) {
  const Matrix m = spread_matrix(300, 260, 17);
  for (const TileCase& t : kCases) {
    MxOptions o = options_for(t);
    o.rounding = Rounding::stochastic;
    std::vector<float> one(m.values.size()), two(m.values.size());
    omp_set_num_threads(1);
    const quant::MxStats a = quant::quantize_tiles(load(*t.grid), m.values, one, m.cols, o);
    omp_set_num_threads(2);
    const quant::MxStats b = quant::quantize_tiles(load(*t.grid), m.values, two, m.cols, o);
    expect_same_bits(one, two, describe(t, m) + ", threads");
    EXPECT_EQ(a.elements.sum_sq_error, b.elements.sum_sq_error);
    EXPECT_EQ(a.clipped_blocks, b.clipped_blocks);
  }
}

TEST(Tiles, RefusesBadShapes) {
  std::vector<float> x(100), y(100);
  MxOptions o;
  o.block_size = 16;
  EXPECT_THROW((void)quant::quantize_tiles(load(kE4m3), x, y, 30, o), std::invalid_argument);  // not whole rows
  o.block_size = 129;
  EXPECT_THROW((void)quant::quantize_tiles(load(kE4m3), x, y, 10, o), std::invalid_argument);
  // NVFP4's E4M3-scaled blocks hold at most 1024 elements: a tile's side at most 32.
  std::vector<float> big(40 * 40, 1.0f), big_out(big.size());
  o.scale_format = BlockScaleFormat::e4m3;
  o.block_size = 33;
  EXPECT_THROW((void)quant::quantize_tiles(load(kE2m1), big, big_out, 40, o), std::invalid_argument);
  o.block_size = 32;
  EXPECT_NO_THROW((void)quant::quantize_tiles(load(kE2m1), big, big_out, 40, o));
}

}  // namespace
}  // namespace altgrad::quant_test::tiles
