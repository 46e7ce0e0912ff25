// Block scaling's scale rules and scale formats against references written here from their
// published definitions (docs/formats.md, "Block scaling"):
//   rules (E8M0, k in [−127, 127], a zero block k = 0), emax = floor(log2 max finite):
//     floor    k = floor(log2 a) − emax                              (OCP MX v1.0 §6.3)
//     round_up the smallest k with a · 2^−k ≤ max finite             (TE MXFP8, torchao RCEIL)
//     ceil     k = ceil(log2 a) − emax                               (torchao CEIL)
//     even     add 2^(22−m) to a's FP32 bits, clear the mantissa, then floor (torchao EVEN)
//     three_quarters  floor's k, elements stored as Q(fl(x·s)) / s with s = (3/4)·2^−k
//                     (Tseng et al. 2025, arXiv:2502.20586: stochastic rounding never clips)
//   fp32:      s = fl(max finite / a) (1 for a zero block), x̂ = Q(fl(x·s)) / s; fp32_pow2: s's
//              mantissa bits cleared (TE Float8BlockScaling, power_2_scale)
//   e4m3:      NVFP4's two levels, with the worked examples of the NVFP4 report's scheme (TE
//              cast/nvfp4) as literal numbers.
// The references find exponents by search or by torchao's bit formulation, scales by one long
// double quotient, and rounding on the extended grid of reference_grid.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "format/bits.hpp"
#include "format/philox.hpp"
#include "quant/block_scale.hpp"
#include "quant/mx.hpp"
#include "quant/point_quantizer.hpp"
#include "reference_grid.hpp"
#include "test_tensors.hpp"

// A namespace of its own: the quant tests build as one unity file.
namespace altgrad::quant_test::block_scale {
namespace {

using format::Rounding;
using quant::BlockScaleFormat;
using quant::MxOptions;
using quant::MxScaleRule;

constexpr MxScaleRule kAllRules[] = {MxScaleRule::floor, MxScaleRule::round_up, MxScaleRule::ceil, MxScaleRule::even,
                                     MxScaleRule::three_quarters};
constexpr float kFloatMax = std::numeric_limits<float>::max();

int emax_of(const RefGrid& g) { return floor_log2(g.max_finite); }

// The smallest j with 2^j ≥ a, by search.
int ceil_log2(long double a) {
  int j = -400;
  while (std::ldexp(1.0L, j) < a) ++j;
  return j;
}

int reference_exponent(const RefGrid& g, float amax, MxScaleRule rule) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 0;
  int k = 0;
  switch (rule) {
    case MxScaleRule::floor:
    case MxScaleRule::three_quarters:
      k = floor_log2(amax) - emax_of(g);
      break;
    case MxScaleRule::round_up:
      k = -400;
      while (std::ldexp(static_cast<long double>(amax), -k) > g.max_finite) ++k;
      break;
    case MxScaleRule::ceil:
      k = ceil_log2(amax) - emax_of(g);
      break;
    case MxScaleRule::even: {  // torchao's formulation, on the bit pattern
      const std::uint32_t bits = format::float_bits(amax) + (1u << (22 - g.mantissa_bits));
      k = static_cast<int>(bits >> 23) - 127 - emax_of(g);  // the exponent field: subnormals read 0
      break;
    }
  }
  return std::clamp(k, -127, 127);
}

// Every binade's edges: powers of two, EVEN's thresholds 1.75 (E2M1) and 1.9375 (E4M3) and max
// finite's multiples, each with its float neighbours; zero, subnormals, the extremes.
std::vector<float> boundary_amaxes(const RefGrid& g) {
  std::vector<float> out = {0.0f, std::numeric_limits<float>::denorm_min(), 1e-40f, kFloatMax};
  const float even = 2.0f - std::ldexp(1.0f, -(g.mantissa_bits + 1));
  for (int j = -130; j <= 127; j += 1) {
    for (const float v : {std::ldexp(1.0f, j), std::ldexp(1.75f, j), std::ldexp(1.9375f, j), std::ldexp(even, j),
                          std::ldexp(static_cast<float>(g.max_finite), j - emax_of(g))}) {
      if (!(v > 0.0f) || !std::isfinite(v)) continue;
      out.insert(out.end(), {v, std::nextafter(v, 0.0f), std::nextafter(v, kFloatMax)});
    }
  }
  return out;
}

TEST(BlockScaleRules, EveryRuleMatchesItsDefinitionAtEveryBoundary) {
  for (const RefGrid& g : {kE4m3, kE2m1, kE5m2, kE3m2, kE2m3}) {
    const format::Format f = load(g);
    const std::vector<float> amaxes = boundary_amaxes(g);
    for (const MxScaleRule rule : kAllRules) {
      std::vector<int> lanes(amaxes.size());
      quant::mx_shared_exponents(f, amaxes, rule, lanes);  // 16 at a time, then one by one
      for (std::size_t i = 0; i < amaxes.size(); ++i) {
        const int want = reference_exponent(g, amaxes[i], rule);
        ASSERT_EQ(quant::mx_shared_exponent(f, amaxes[i], rule), want)
            << g.name << " rule " << static_cast<int>(rule) << std::hexfloat << " amax " << amaxes[i];
        ASSERT_EQ(lanes[i], want) << g.name << " rule " << static_cast<int>(rule) << std::hexfloat << " amax "
                                  << amaxes[i];
      }
    }
  }
}

TEST(BlockScaleRules, TiesAndThresholdsByHand) {
  const format::Format e4m3 = load(kE4m3), e2m1 = load(kE2m1);
  const auto k = [](const format::Format& f, float a, MxScaleRule r) { return quant::mx_shared_exponent(f, a, r); };
  // A power of two: ceil and floor agree; one ulp above, ceil moves up a binade.
  EXPECT_EQ(k(e4m3, 1.0f, MxScaleRule::ceil), -8);
  EXPECT_EQ(k(e4m3, std::nextafter(1.0f, 2.0f), MxScaleRule::ceil), -7);
  EXPECT_EQ(k(e4m3, std::nextafter(1.0f, 2.0f), MxScaleRule::floor), -8);
  // EVEN's threshold: E4M3 rounds 1.9375 (1.1111b) to 2 at 3 bits, E2M1 rounds 1.75 at 1 bit.
  EXPECT_EQ(k(e4m3, 1.9375f, MxScaleRule::even), -7);
  EXPECT_EQ(k(e4m3, std::nextafter(1.9375f, 0.0f), MxScaleRule::even), -8);  // 1.9374…·2^8 clips at 448
  EXPECT_EQ(k(e2m1, 1.75f, MxScaleRule::even), -1);
  EXPECT_EQ(k(e2m1, std::nextafter(1.75f, 0.0f), MxScaleRule::even), -2);
  // round_up (TE MXFP8 = torchao RCEIL) at max finite: 448 fits, one ulp above does not.
  EXPECT_EQ(k(e4m3, 448.0f, MxScaleRule::round_up), 0);
  EXPECT_EQ(k(e4m3, std::nextafter(448.0f, 1e9f), MxScaleRule::round_up), 1);
  EXPECT_EQ(k(e4m3, 448.0f, MxScaleRule::ceil), 1);  // ceil aims at 2^emax = 256, wasting 256..448
  // A zero block keeps k = 0 under every rule (E8M0 code 127).
  for (const MxScaleRule r : kAllRules) EXPECT_EQ(k(e4m3, 0.0f, r), 0);
}

// The rules through quantize_mx: each block's code and values (a block's amax is its first element).
TEST(BlockScaleRules, QuantizeMxUsesTheRuleOfEachBlock) {
  const format::Format f = load(kE4m3);
  const std::vector<float> amaxes = {1.9375f, std::nextafter(1.9375f, 0.0f), 1.0f, 449.0f, 0.0f, 3.0e-3f};
  std::vector<float> in;
  for (const float a : amaxes) in.insert(in.end(), {a, -a / 3.0f, a / 7.0f, 0.0f});
  for (const MxScaleRule rule : kAllRules) {
    if (rule == MxScaleRule::three_quarters) continue;  // its scale has no code (BlockScaleThreeQuarters)
    MxOptions o;
    o.block_size = 4;
    o.rule = rule;
    std::vector<float> out(in.size());
    std::vector<std::uint8_t> codes(amaxes.size());
    quant::quantize_mx(f, in, out, in.size(), o, codes);
    for (std::size_t b = 0; b < amaxes.size(); ++b) {
      const int want = reference_exponent(kE4m3, amaxes[b], rule);
      EXPECT_EQ(codes[b], want + 127) << "rule " << static_cast<int>(rule) << " block " << b;
      for (std::size_t i = 4 * b; i < 4 * b + 4; ++i) {
        const long double scaled = std::ldexp(static_cast<long double>(in[i]), -want);
        const long double q = std::min(round_nearest_even(kE4m3, std::fabs(scaled)), kE4m3.max_finite);
        EXPECT_EQ(out[i], static_cast<float>(std::copysign(q, scaled) * std::ldexp(1.0L, want))) << i;
      }
    }
  }
}

// ---- fp32 and fp32_pow2 ------------------------------------------------------------------

float reference_multiplier(const RefGrid& g, float amax, BlockScaleFormat scale_format) {
  const float s = reference_scale(g.max_finite, amax, 0);  // one rounding of the exact quotient; 1 for 0
  return scale_format == BlockScaleFormat::fp32_pow2 ? std::ldexp(1.0f, floor_log2(s)) : s;
}

// Rows of `row_length`, blocks of `block` (the last of a row shorter): Q(fl(x·s)) / s per block
// (s the FP32 multiplier, or under E8M0 2^−k by the rule, three_quarters' (3/4)·2^−k),
// under nearest-even or, with words, stochastic rounding through the engine's codec on the same
// FP32 product (the codec is tested on its own in tests/format).
std::vector<float> reference_fp32_rows(const RefGrid& g, const std::vector<float>& in, std::size_t row_length,
                                       const MxOptions& o, std::uint64_t* clipped = nullptr) {
  const format::Format f = load(g);
  std::vector<float> out(in.size());
  for (std::size_t row = 0; row < in.size(); row += row_length) {
    for (std::size_t b = 0; b < row_length; b += o.block_size) {
      const std::size_t begin = row + b, end = row + std::min(row_length, b + o.block_size);
      const float amax = reference_block_amax(in, begin, end);
      const float e8m0_factor = o.rule == MxScaleRule::three_quarters ? 0.75f : 1.0f;
      const float s = o.scale_format == BlockScaleFormat::e8m0
                          ? std::ldexp(e8m0_factor, -reference_exponent(g, amax, o.rule))
                          : reference_multiplier(g, amax, o.scale_format);
      bool clip = false;
      for (std::size_t i = begin; i < end; ++i) {
        const float scaled = std::clamp(in[i] * s, -kFloatMax, kFloatMax);
        long double q = 0;
        if (format::is_stochastic(o.rounding)) {
          q = format::decode(f, format::encode(f, o.rounding, scaled,
                                               format::philox_word(o.seed, o.stream, o.first_index + i)));
        } else {
          q = std::copysign(std::min(round_nearest_even(g, std::fabs(scaled)), g.max_finite), scaled);
        }
        clip |= std::isfinite(in[i]) && overflows_nearest_even(g, std::fabs(static_cast<long double>(scaled)));
        out[i] = static_cast<float>(q / static_cast<long double>(s));
      }
      if (clipped) *clipped += clip ? 1 : 0;
    }
  }
  return out;
}

// Rows of 70 (blocks 32, 32 and a ragged 6), magnitudes from 2^−30 to 2^30 per row, a zero block.
std::vector<float> ragged_rows(std::size_t rows) {
  TensorRng rng(23);
  std::vector<float> in(rows * 70);
  for (std::size_t r = 0; r < rows; ++r) {
    const float magnitude = std::ldexp(1.0f, static_cast<int>(r * 7 % 61) - 30);
    for (std::size_t c = 0; c < 70; ++c) in[r * 70 + c] = rng.log_uniform(-4, 2) * magnitude;
  }
  std::fill_n(in.begin() + 70, 32, 0.0f);  // row 1's first block
  return in;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(format::float_bits(got[i]), format::float_bits(want[i]))
        << what << " element " << i << std::hexfloat << ": " << got[i] << " vs " << want[i];
  }
}

TEST(BlockScaleFp32, EveryBlockAtItsOwnMultiplierWithARaggedLastBlock) {
  const std::vector<float> in = ragged_rows(40);
  for (const RefGrid& g : {kE4m3, kE2m1, kE5m2}) {
    for (const BlockScaleFormat sf : {BlockScaleFormat::fp32, BlockScaleFormat::fp32_pow2}) {
      for (const Rounding rounding : {Rounding::nearest_even, Rounding::stochastic}) {
        MxOptions o;
        o.scale_format = sf;
        o.rounding = rounding;
        o.seed = 99;
        o.stream = 4;
        o.first_index = 3;
        std::vector<float> out(in.size());
        const quant::MxStats stats = quant::quantize_mx(load(g), in, out, 70, o);
        std::uint64_t clipped = 0;
        expect_same_bits(out, reference_fp32_rows(g, in, 70, o, &clipped), g.name);
        EXPECT_EQ(stats.blocks, 40u * 3u);
        if (rounding == Rounding::nearest_even) {
          EXPECT_EQ(stats.clipped_blocks, clipped) << g.name;
        }
        EXPECT_EQ(stats.elements.count, in.size());
      }
    }
  }
}

// three_quarters: floor's exponent, the elements at a further 3/4. Under stochastic rounding an
// E2M1 block's max scales below 6 and nothing clips, where the floor rule clips blocks whose max
// scales into (6, 8).
TEST(BlockScaleThreeQuarters, ElementsAtThreeQuartersOfTheFloorScale) {
  const std::vector<float> in = ragged_rows(40);
  for (const RefGrid& g : {kE2m1, kE4m3}) {
    for (const Rounding rounding : {Rounding::nearest_even, Rounding::stochastic}) {
      MxOptions o;
      o.rule = MxScaleRule::three_quarters;
      o.rounding = rounding;
      o.seed = 12;
      o.stream = 3;
      std::vector<float> out(in.size());
      const quant::MxStats stats = quant::quantize_mx(load(g), in, out, 70, o);
      expect_same_bits(out, reference_fp32_rows(g, in, 70, o), g.name);
      EXPECT_EQ(stats.blocks, 40u * 3u);
      if (rounding == Rounding::stochastic) {
        EXPECT_EQ(stats.clipped_blocks, 0u) << g.name;
        EXPECT_EQ(stats.elements.overflow, 0u) << g.name;
      }
    }
  }
  MxOptions floor;
  floor.rounding = Rounding::stochastic;
  std::vector<float> out(in.size());
  EXPECT_GT(quant::quantize_mx(load(kE2m1), in, out, 70, floor).clipped_blocks, 0u);
  // Its scale is no E8M0 value: no codes.
  std::vector<std::uint8_t> codes(3);
  MxOptions o;
  o.rule = MxScaleRule::three_quarters;
  EXPECT_THROW(quant::quantize_mx(load(kE2m1), std::span<const float>(in).first(70), std::span<float>(out).first(70),
                                  70, o, codes),
               std::invalid_argument);
  EXPECT_EQ(quant::three_quarters_multiplier(load(kE2m1), 5.0f), 0.75f);     // k = 2 − 2 = 0
  EXPECT_EQ(quant::three_quarters_multiplier(load(kE2m1), 0.0f), 0.75f);     // a zero block: k = 0
  EXPECT_EQ(quant::three_quarters_multiplier(load(kE4m3), 1.0f), 192.0f);    // k = −8
}

TEST(BlockScaleFp32, MultiplierAtTheEdges) {
  const format::Format e4m3 = load(kE4m3);
  EXPECT_EQ(quant::block_multiplier(e4m3, 0.0f, BlockScaleFormat::fp32), 1.0f);  // TE: a = 0 gives s = 1
  EXPECT_EQ(quant::block_multiplier(e4m3, std::numeric_limits<float>::infinity(), BlockScaleFormat::fp32), 1.0f);
  EXPECT_EQ(quant::block_multiplier(e4m3, 3.0f, BlockScaleFormat::fp32), 448.0f / 3.0f);
  EXPECT_EQ(quant::block_multiplier(e4m3, 3.0f, BlockScaleFormat::fp32_pow2), 128.0f);  // 149.3 → 2^7
  EXPECT_EQ(quant::block_multiplier(e4m3, 448.0f, BlockScaleFormat::fp32_pow2), 1.0f);
  EXPECT_EQ(quant::block_multiplier(e4m3, std::nextafter(448.0f, 1e9f), BlockScaleFormat::fp32_pow2), 0.5f);
  // A tiny amax: 448 / 1e-40 overflows FP32; the multiplier stops at FLT_MAX, its power of two 2^127.
  EXPECT_EQ(quant::block_multiplier(e4m3, 1e-40f, BlockScaleFormat::fp32), kFloatMax);
  EXPECT_EQ(quant::block_multiplier(e4m3, 1e-40f, BlockScaleFormat::fp32_pow2), std::ldexp(1.0f, 127));
}

// The column-wise copy is the row-wise copy of the transpose, run by run (blocks never cross a
// run; 24-row runs make the last block of each run 8 rows long). Stochastic rounding too: the
// column copy numbers its elements in the run-transposed order (quant/mx.hpp), which is the
// transpose's row-major order.
TEST(BlockScaleColumns, AreTheRowsOfTheTransposeUnderEveryScaleFormat) {
  constexpr std::size_t kRows = 48, kCols = 20, kRun = 24;
  TensorRng rng(5);
  std::vector<float> in(kRows * kCols);
  for (float& v : in) v = rng.log_uniform(-10, 10);
  // Each non-exponent scale: the three scale formats, and E8M0 under three_quarters.
  const std::pair<BlockScaleFormat, MxScaleRule> scales[] = {{BlockScaleFormat::fp32, MxScaleRule::floor},
                                                             {BlockScaleFormat::fp32_pow2, MxScaleRule::floor},
                                                             {BlockScaleFormat::e4m3, MxScaleRule::floor},
                                                             {BlockScaleFormat::e8m0, MxScaleRule::three_quarters}};
  for (const auto& [sf, rule] : scales) {
    for (const Rounding rounding : {Rounding::nearest_even, Rounding::stochastic}) {
      MxOptions o;
      o.block_size = 16;
      o.scale_format = sf;
      o.rule = rule;
      o.rounding = rounding;
      o.seed = 5;
      o.stream = 9;
      o.first_index = 7;
      std::vector<float> out(in.size());
      const quant::MxStats stats = quant::quantize_mx_columns(load(kE2m1), in, out, kCols, kRun, o);
      EXPECT_EQ(stats.blocks, kRows / kRun * 2 * kCols);
      // Each run's transpose (kCols rows of kRun), quantized row-wise, in one call for e4m3's tensor amax.
      std::vector<float> t(in.size()), t_out(in.size());
      for (std::size_t s = 0; s < kRows / kRun; ++s) {
        for (std::size_t c = 0; c < kCols; ++c) {
          for (std::size_t r = 0; r < kRun; ++r) t[(s * kCols + c) * kRun + r] = in[(s * kRun + r) * kCols + c];
        }
      }
      quant::quantize_mx(load(kE2m1), t, t_out, kRun, o);
      for (std::size_t s = 0; s < kRows / kRun; ++s) {
        for (std::size_t c = 0; c < kCols; ++c) {
          for (std::size_t r = 0; r < kRun; ++r) {
            ASSERT_EQ(out[(s * kRun + r) * kCols + c], t_out[(s * kCols + c) * kRun + r]) << static_cast<int>(sf);
          }
        }
      }
    }
  }
}

// Blocks longer than the MX kernels take (a whole reduction axis: block = "axis"): one block per
// row of 1500 and per column of a 1300-row run, under every E8M0 rule and the FP32 scales, against
// the reference; the columns against the rows of the transpose. NVFP4 refuses them.
TEST(BlockScaleLongBlocks, AWholeAxisIsOneBlockUnderEveryScale) {
  constexpr std::size_t kRowLength = 1500, kRows = 5, kColumnRun = 1300, kCols = 3;
  TensorRng rng(41);
  std::vector<float> rows(kRows * kRowLength), columns(kColumnRun * kCols);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = rng.log_uniform(-12, 4) * std::ldexp(1.0f, 9 * static_cast<int>(i / kRowLength));
  for (float& v : columns) v = rng.log_uniform(-20, 6);
  std::fill_n(rows.begin() + kRowLength, kRowLength, 0.0f);  // row 1
  const std::pair<BlockScaleFormat, MxScaleRule> scales[] = {
      {BlockScaleFormat::e8m0, MxScaleRule::floor},          {BlockScaleFormat::e8m0, MxScaleRule::round_up},
      {BlockScaleFormat::e8m0, MxScaleRule::ceil},           {BlockScaleFormat::e8m0, MxScaleRule::even},
      {BlockScaleFormat::e8m0, MxScaleRule::three_quarters}, {BlockScaleFormat::fp32, MxScaleRule::floor},
      {BlockScaleFormat::fp32_pow2, MxScaleRule::floor}};
  for (const RefGrid& g : {kE4m3, kE2m1}) {
    for (const auto& [sf, rule] : scales) {
      for (const Rounding rounding : {Rounding::nearest_even, Rounding::stochastic}) {
        MxOptions o;
        o.block_size = kRowLength;
        o.scale_format = sf;
        o.rule = rule;
        o.rounding = rounding;
        o.seed = 8;
        o.stream = 2;
        std::vector<float> out(rows.size());
        const quant::MxStats stats = quant::quantize_mx(load(g), rows, out, kRowLength, o);
        expect_same_bits(out, reference_fp32_rows(g, rows, kRowLength, o), g.name);
        EXPECT_EQ(stats.blocks, kRows);

        o.block_size = kColumnRun;
        std::vector<float> column_out(columns.size()), t(columns.size()), t_out(columns.size());
        EXPECT_EQ(quant::quantize_mx_columns(load(g), columns, column_out, kCols, kColumnRun, o).blocks, kCols);
        for (std::size_t c = 0; c < kCols; ++c) {
          for (std::size_t r = 0; r < kColumnRun; ++r) t[c * kColumnRun + r] = columns[r * kCols + c];
        }
        quant::quantize_mx(load(g), t, t_out, kColumnRun, o);
        for (std::size_t c = 0; c < kCols; ++c) {
          for (std::size_t r = 0; r < kColumnRun; ++r) {
            ASSERT_EQ(format::float_bits(column_out[r * kCols + c]), format::float_bits(t_out[c * kColumnRun + r]))
                << g.name << " column " << c << " row " << r;
          }
        }
      }
    }
  }
  MxOptions nvfp4_long;
  nvfp4_long.block_size = kRowLength;
  nvfp4_long.scale_format = BlockScaleFormat::e4m3;
  std::vector<float> out(rows.size());
  EXPECT_THROW(quant::quantize_mx(load(kE2m1), rows, out, kRowLength, nvfp4_long), std::invalid_argument);
}

// ---- NVFP4: E2M1 elements, E4M3 scales per 16, an FP32 tensor scale ------------------------

MxOptions nvfp4() {
  MxOptions o;
  o.block_size = 16;
  o.scale_format = BlockScaleFormat::e4m3;
  return o;
}

// Block 0 sets the tensor amax; block 1 is the block under test.
std::vector<float> two_blocks(float tensor_amax, std::vector<float> block) {
  std::vector<float> in(16, 0.0f);
  in[0] = tensor_amax;
  block.resize(16, 0.0f);
  in.insert(in.end(), block.begin(), block.end());
  return in;
}

std::vector<float> nvfp4_out(const std::vector<float>& in, quant::MxStats* stats = nullptr) {
  std::vector<float> out(in.size());
  const quant::MxStats s = quant::quantize_mx(load(kE2m1), in, out, in.size(), nvfp4());
  if (stats) *stats = s;
  return out;
}

TEST(BlockScaleNvfp4, TensorScaleOfTheReport) {
  const format::Format e2m1 = load(kE2m1);
  const quant::TensorScale t = quant::tensor_scale(e2m1, 10.5f);
  EXPECT_EQ(t.range, 2688.0f);  // 448 · 6
  EXPECT_EQ(t.encode, 256.0f);
  EXPECT_EQ(t.decode, 1.0f / 256.0f);
  EXPECT_EQ(quant::tensor_scale(e2m1, 0.0f).encode, 1.0f);  // A = 0: S_enc = 1
  EXPECT_EQ(quant::tensor_scale(e2m1, 1e-40f).encode, kFloatMax);
}

// u = 4.25 is an E4M3 tie between 4 and 4.5: s_b = 4 (even), e = 64, b·e = 6.375 rounds to 6, so
// the block max comes back as 6·4·10.5/2688 = 0.09375, not 0.0996.
TEST(BlockScaleNvfp4, ScaleTieRoundsDownAndTheBlockMaxClipsToSix) {
  const float b = 51.0f / 512.0f;
  const quant::TensorScale t = quant::tensor_scale(load(kE2m1), 10.5f);
  EXPECT_EQ(quant::e4m3_block_scale(load(kE2m1), b, t), 4.0f);
  EXPECT_EQ(quant::e4m3_element_factor(4.0f, t), 64.0f);
  const std::vector<float> out = nvfp4_out(two_blocks(10.5f, {b, -b}));
  EXPECT_EQ(out[16], 0.09375f);
  EXPECT_EQ(out[17], -0.09375f);
  EXPECT_EQ(out[0], 10.5f);  // the tensor max: s_b = 448, code 6
  // u = 4.75 ties between 4.5 and 5: up to 5 (even), and the max rounds up to 6 without clipping.
  const float up = 28.5f / 256.0f;
  EXPECT_EQ(quant::e4m3_block_scale(load(kE2m1), up, t), 5.0f);
  EXPECT_EQ(nvfp4_out(two_blocks(10.5f, {up}))[16], 6.0f * 5.0f * 10.5f / 2688.0f);
}

// The report's FP32 operation order decides ties: with A = 0x1.7c6236p+6, fl(S_enc · fl(1/6)) and
// fl(S_enc / 6) differ by an ulp, and for b = 0x1.021e1p+0 the first gives u = 4.75 exactly (an
// E4M3 tie, to 5) where the second would give 4.7499995 (to 4.5).
TEST(BlockScaleNvfp4, ScaleFollowsTheOperationOrderOfTheSource) {
  const float a = 0x1.7c6236p+6f, b = 0x1.021e1p+0f;
  const quant::TensorScale t = quant::tensor_scale(load(kE2m1), a);
  EXPECT_EQ(b * (t.encode * (1.0f / 6.0f)), 4.75f);
  EXPECT_NE(b * (t.encode / 6.0f), 4.75f);
  EXPECT_EQ(quant::e4m3_block_scale(load(kE2m1), b, t), 5.0f);
  EXPECT_EQ(nvfp4_out(two_blocks(a, {b}))[16], static_cast<float>(6.0L * 5.0L * a / 2688.0L));
}

TEST(BlockScaleNvfp4, SubnormalBlockScale) {
  const quant::TensorScale t = quant::tensor_scale(load(kE2m1), 10.0f);
  EXPECT_EQ(quant::e4m3_block_scale(load(kE2m1), 3e-4f, t), 7.0f * std::ldexp(1.0f, -9));  // 0.013671875
  const std::vector<float> out = nvfp4_out(two_blocks(10.0f, {3e-4f, 1e-4f}));
  // x̂ = q · s_b · A / 2688, computed exactly and rounded once.
  const long double unit = 7.0L * std::ldexp(1.0L, -9) * 10.0L / 2688.0L;
  EXPECT_EQ(out[16], static_cast<float>(6.0L * unit));  // 3e-4 · e = 5.486 → 6
  EXPECT_EQ(out[17], static_cast<float>(2.0L * unit));  // 1e-4 · e = 1.829 → 2
}

// b < A·2^−10/448 rounds the E4M3 scale to 0: the codes saturate to ±6 (x·FLT_MAX) but the values
// are 0; the block's nonzero elements count as underflows and the block is not clipped.
TEST(BlockScaleNvfp4, FlushedBlockGivesZerosThatCountAsUnderflow) {
  const quant::TensorScale t = quant::tensor_scale(load(kE2m1), 10.0f);
  EXPECT_EQ(quant::e4m3_block_scale(load(kE2m1), 1e-6f, t), 0.0f);
  EXPECT_EQ(quant::e4m3_element_factor(0.0f, t), kFloatMax);
  quant::MxStats stats;
  const std::vector<float> out = nvfp4_out(two_blocks(10.0f, {1e-6f, -5e-7f}), &stats);
  EXPECT_EQ(out[16], 0.0f);
  EXPECT_EQ(format::float_bits(out[17]), format::float_bits(-0.0f));
  EXPECT_EQ(stats.elements.underflow, 2u);
  EXPECT_EQ(stats.elements.overflow, 0u);
  EXPECT_EQ(stats.clipped_blocks, 0u);
  EXPECT_EQ(stats.blocks, 2u);
}

TEST(BlockScaleNvfp4, ZeroBlocksAndAZeroTensor) {
  quant::MxStats stats;
  const std::vector<float> out = nvfp4_out(two_blocks(3.0f, {}), &stats);
  for (std::size_t i = 1; i < out.size(); ++i) EXPECT_EQ(out[i], 0.0f) << i;
  EXPECT_EQ(stats.elements.underflow, 0u);
  const std::vector<float> zeros(32, 0.0f);
  for (const float v : nvfp4_out(zeros, &stats)) EXPECT_EQ(v, 0.0f);
  EXPECT_EQ(stats.elements.zero_inputs, 32u);
}

// With a normal s_b the scaled block max is ≥ 6/(1 + 1/16) > 5: every element of an all-equal
// block is ±6 codes, whether s_b rounded up or down. With a subnormal s_b the relative rounding can
// exceed 1/16: u = 1.6·2^−9 rounds to s_b = 2^−8, the elements scale to 4.8 and become 4.
TEST(BlockScaleNvfp4, AllEqualBlocks) {
  const quant::TensorScale t = quant::tensor_scale(load(kE2m1), 10.5f);  // S_enc = 256, per amax 256/6
  for (const float v : {0.3f, 0.07f, 1.234f, 7.77f}) {
    std::vector<float> block(16, v);
    block[3] = -v;
    const float s_b = quant::e4m3_block_scale(load(kE2m1), v, t);
    const float want = static_cast<float>(6.0L * s_b * 10.5L / 2688.0L);
    const std::vector<float> out = nvfp4_out(two_blocks(10.5f, block));
    for (std::size_t i = 16; i < 32; ++i) EXPECT_EQ(out[i], i == 19 ? -want : want) << v << " at " << i;
  }
  const float b = 1.6f * std::ldexp(1.0f, -9) * 6.0f / 256.0f;  // u = b · 256/6 = 1.6·2^−9
  EXPECT_EQ(quant::e4m3_block_scale(load(kE2m1), b, t), std::ldexp(1.0f, -8));
  const std::vector<float> out = nvfp4_out(two_blocks(10.5f, std::vector<float>(16, b)));
  EXPECT_EQ(out[16], static_cast<float>(4.0L * std::ldexp(1.0L, -8) * 10.5L / 2688.0L));
}

// Outliers: the tensor scale follows the largest; blocks far below it get coarse or subnormal
// scales. Checked element by element against the report's steps 1–6 in long double, under
// nearest-even, stochastic rounding (the gradients' rule) and truncation (the codec's general path),
// the codes of the last two through the engine's codec on the same FP32 product (tests/format holds
// the codec to its definition).
TEST(BlockScaleNvfp4, OutliersAgainstTheStepsOfTheReport) {
  TensorRng rng(8);
  std::vector<float> in(16 * 64);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = rng.log_uniform(-3, 1) * std::ldexp(1.0f, -static_cast<int>(i / 16 % 24));
  in[5] = 9.0e3f;     // outlier in block 0
  in[700] = -3.0e4f;  // the tensor amax, in block 43
  float a = 0.0f;
  for (const float v : in) a = std::max(a, std::fabs(v));
  const float s_enc = static_cast<float>(2688.0L / a), s_dec = static_cast<float>(1.0L / s_enc);
  const float per_amax = static_cast<float>(static_cast<long double>(s_enc) * static_cast<float>(1.0L / 6.0L));
  const format::Format e2m1 = load(kE2m1);
  for (const Rounding rounding : {Rounding::nearest_even, Rounding::stochastic, Rounding::toward_zero}) {
    MxOptions o = nvfp4();
    o.rounding = rounding;
    o.seed = 31;
    o.stream = 2;
    o.first_index = 5;
    std::vector<float> out(in.size());
    quant::quantize_mx(e2m1, in, out, in.size(), o);
    for (std::size_t b = 0; b < in.size() / 16; ++b) {
      float amax = 0.0f;
      for (std::size_t i = 16 * b; i < 16 * b + 16; ++i) amax = std::max(amax, std::fabs(in[i]));
      const float u = static_cast<float>(static_cast<long double>(amax) * per_amax);
      const long double s_b = round_nearest_even(kE4m3, u);  // below 448 here
      const long double d = static_cast<float>(s_b * s_dec);
      const float e = d > 0 ? static_cast<float>(std::min(1.0L / d, static_cast<long double>(kFloatMax))) : kFloatMax;
      for (std::size_t i = 16 * b; i < 16 * b + 16; ++i) {
        const float y = std::clamp(static_cast<float>(static_cast<long double>(in[i]) * e), -kFloatMax, kFloatMax);
        const long double q =
            rounding == Rounding::nearest_even
                ? std::copysign(std::min(round_nearest_even(kE2m1, std::fabs(y)), 6.0L), y)
                : format::decode(e2m1, format::encode(e2m1, rounding, y, format::philox_word(31, 2, 5 + i)));
        ASSERT_EQ(out[i], static_cast<float>(q * s_b * a / 2688.0L))
            << "element " << i << " block " << b << " rounding " << static_cast<int>(rounding);
      }
    }
  }
}

// A point's settings reach the quantizer: a block-scaled point with each scale format gives
// quantize_mx's bits for those options, rows and columns.
TEST(BlockScalePoint, PointQuantizerPassesTheScaleFormat) {
  const std::vector<float> in = ragged_rows(6);
  for (const BlockScaleFormat sf : {BlockScaleFormat::fp32, BlockScaleFormat::fp32_pow2, BlockScaleFormat::e4m3}) {
    quant::PointSettings settings;
    settings.enabled = true;
    settings.format = load(kE2m1);
    settings.format_name = "e2m1";
    settings.scaling = quant::Scaling::block;
    settings.block = 16;
    settings.scale_format = sf;
    quant::PointQuantizer point(settings, 1, 0);
    std::vector<float> got(in.size()), want(in.size());
    const quant::PointStats stats = point.apply(in, got, 70);
    MxOptions o;
    o.block_size = 16;
    o.scale_format = sf;
    const quant::MxStats mx = quant::quantize_mx(load(kE2m1), in, want, 70, o);
    expect_same_bits(got, want, "rows");
    EXPECT_EQ(stats.blocks, mx.blocks);
    EXPECT_EQ(stats.clipped_blocks, mx.clipped_blocks);
    point.apply(in, got, quant::OperandLayout{70, true, 0});
    quant::quantize_mx_columns(load(kE2m1), in, want, 70, in.size() / 70, o);
    expect_same_bits(got, want, "columns");
  }
}

TEST(BlockScaleNvfp4, ScaleCodesAreE8m0Only) {
  std::vector<float> in(32, 1.0f), out(32);
  std::vector<std::uint8_t> codes(2);
  EXPECT_THROW(quant::quantize_mx(load(kE2m1), in, out, 32, nvfp4(), codes), std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::quant_test::block_scale
