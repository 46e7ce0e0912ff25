// MX block scaling against a scalar reference written from the spec: blocks of consecutive
// elements within a row share 2^k (E8M0 code k + 127, k in [−127, 127]) with
//   floor:    k = floor(log2 amax) − floor(log2 max_finite)
//   round_up: the smallest k with amax · 2^−k ≤ max_finite
// taken from the block's finite elements (k = 0 for a zero block), and each element becomes
// decode(encode(fl(x · 2^−k))) · 2^k. A block is clipped when any element overflows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <vector>

#include "support/special_floats.hpp"
#include "determinism.hpp"
#include "format/codec.hpp"
#include "format/philox.hpp"
#include "quant/mx.hpp"
#include "quant/quantize.hpp"
#include "reference_grid.hpp"
#include "reference_stats.hpp"
#include "test_tensors.hpp"

namespace altgrad::quant_test {
namespace {

using test_support::kInf;
using test_support::kNan;

using format::Rounding;
using quant::MxOptions;
using quant::MxScaleRule;

constexpr MxScaleRule kRules[] = {MxScaleRule::floor, MxScaleRule::round_up};

// A format whose max finite (1.75·2^−5) is below 1, so large blocks need k above E8M0's 127.
constexpr RefGrid kE4m3Bias20{"e4m3,bias=20", 3, -19, 0.0546875L};

// Brute force over k: amax · 2^−k falls as k grows, so the first k that fits is the smallest.
int smallest_fitting_exponent(long double amax, long double max_finite) {
  int k = -400;
  while (std::ldexp(amax, -k) > max_finite) ++k;
  return k;
}

int reference_shared_exponent(const RefGrid& g, float amax, MxScaleRule rule) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 0;
  const int k = rule == MxScaleRule::floor ? floor_log2(amax) - floor_log2(g.max_finite)
                                           : smallest_fitting_exponent(amax, g.max_finite);
  return std::clamp(k, -127, 127);
}

struct MxReference {
  std::vector<float> out;
  std::vector<std::uint8_t> codes;
  std::uint64_t blocks = 0;
  std::uint64_t clipped_blocks = 0;  // under nearest-even
  ReferenceStats elements;           // overflow and underflow under nearest-even
};

MxReference reference_mx(const RefGrid& g, const std::vector<float>& in, std::size_t row_length,
                         const MxOptions& o) {
  const format::Format f = load(g);
  MxReference ref;
  ref.out.resize(in.size());
  for (std::size_t row = 0; row < in.size(); row += row_length) {
    for (std::size_t b = 0; b < row_length; b += o.block_size) {
      const std::size_t begin = row + b, end = row + std::min(row_length, b + o.block_size);
      const float amax = reference_block_amax(in, begin, end);
      const int k = reference_shared_exponent(g, amax, o.rule);
      ref.codes.push_back(static_cast<std::uint8_t>(k + 127));
      ++ref.blocks;
      bool clipped = false;
      for (std::size_t i = begin; i < end; ++i) {
        // Both products are exact in long double, so each cast is the one FP32 rounding.
        const float scaled = static_cast<float>(static_cast<long double>(in[i]) * std::ldexp(1.0L, -k));
        const std::uint32_t word =
            format::is_stochastic(o.rounding) ? format::philox_word(o.seed, o.stream, o.first_index + i) : 0u;
        const float q = format::decode(f, format::encode(f, o.rounding, scaled, word));
        ref.out[i] = static_cast<float>(static_cast<long double>(q) * std::ldexp(1.0L, k));
        ref.elements.add(g, in[i], scaled, ref.out[i]);
        clipped |= std::isfinite(in[i]) && overflows_nearest_even(g, std::fabs(static_cast<long double>(scaled)));
      }
      ref.clipped_blocks += clipped;
    }
  }
  return ref;
}

struct MxRun {
  std::vector<float> out;
  std::vector<std::uint8_t> codes;
  quant::MxStats stats;
};

std::size_t block_count(std::size_t n, std::size_t row_length, std::size_t block) {
  return n / row_length * ((row_length + block - 1) / block);
}

MxRun run_mx(const RefGrid& g, const std::vector<float>& in, std::size_t row_length, const MxOptions& o) {
  MxRun run;
  run.out.resize(in.size());
  run.codes.assign(block_count(in.size(), row_length, o.block_size), 0xFF);
  run.stats = quant::quantize_mx(load(g), in, run.out, row_length, o, run.codes);
  return run;
}

MxOptions mx_options(MxScaleRule rule, Rounding rounding = Rounding::nearest_even, std::size_t block = 32) {
  MxOptions o;
  o.rule = rule;
  o.rounding = rounding;
  o.block_size = block;
  o.seed = 0x1234'5678'9abcull;
  o.stream = 3;
  o.first_index = 5;  // unaligned with the Philox groups of four
  return o;
}

// Regions of 32 elements, each with its own magnitude and 14 binades of spread so small elements
// underflow the element format; some regions are all zero and some hold NaNs. The magnitude walks
// between float32's bottom (where k clamps at −127) and 2^120 in steps of at most 2^±20, so a block
// straddling two regions never spans so many binades that fl(x·2^−k) itself underflows float32
// (that case is QuantizeMx.ElementWhoseScaledProductUnderflowsFloat32CountsAsUnderflow).
std::vector<float> mx_tensor(std::size_t n, std::uint32_t seed) {
  TensorRng rng(seed);
  std::vector<float> x(n);
  int top = 0;
  for (std::size_t start = 0; start < n; start += 32) {
    const std::uint32_t kind = rng.word() % 16;
    top = std::clamp(top + rng.integer(-20, 20), -140, 120);
    for (std::size_t i = start; i < std::min(n, start + 32); ++i) {
      x[i] = kind == 0 ? 0.0f : rng.log_uniform(top - 14, top);
      if (kind == 1 && rng.word() % 8 == 0) x[i] = kNan;
    }
  }
  return x;
}

// Amaxes at and around every power of two, around max finite times every power of two, with the
// mantissas where floor clips, and random ones.
std::vector<float> edge_amaxes(const RefGrid& g) {
  std::vector<float> a;
  const auto add_with_neighbours = [&a](float v) {
    if (!(v > 0.0f) || !std::isfinite(v)) return;
    a.insert(a.end(), {v, std::nextafter(v, 0.0f), std::nextafter(v, kInf)});
  };
  for (int e = -149; e <= 127; ++e) {
    add_with_neighbours(std::ldexp(1.0f, e));
    add_with_neighbours(static_cast<float>(std::ldexp(g.max_finite, e - floor_log2(g.max_finite))));
    for (float m : {1.5f, 1.75f, 1.78f, 1.8125f, 1.82f, 1.9f, 1.999f}) add_with_neighbours(std::ldexp(m, e));
  }
  TensorRng rng(41);
  for (int i = 0; i < 2000; ++i) a.push_back(std::fabs(rng.log_uniform(-149, 127)));
  a.push_back(std::numeric_limits<float>::max());
  return a;
}

TEST(MxSharedExponent, MatchesBothRulesComputedIndependently) {
  for (const RefGrid& g : {kE4m3, kE4m3fnuz, kE5m2, kE3m2, kE2m3, kE2m1, kBf16, kE4m3Bias20}) {
    const format::Format f = load(g);
    for (float amax : edge_amaxes(g)) {
      for (MxScaleRule rule : kRules) {
        ASSERT_EQ(quant::mx_shared_exponent(f, amax, rule), reference_shared_exponent(g, amax, rule))
            << g.name << std::hexfloat << " amax " << amax << (rule == MxScaleRule::floor ? " floor" : " round_up");
      }
    }
  }
}

// The batched exponents, 16 lanes at a time, against the one-by-one function: every edge amax, with
// zeros, subnormals, infinities, NaNs and negative values among them, at several offsets so that
// each value falls in a different lane and some in the scalar tail.
TEST(MxSharedExponent, BatchedMatchesOneByOne) {
  for (const RefGrid& g : {kE4m3, kE4m3fnuz, kE5m2, kE3m2, kE2m3, kE2m1, kBf16, kE4m3Bias20}) {
    const format::Format f = load(g);
    std::vector<float> amaxes = edge_amaxes(g);
    for (const float special : {0.0f, -0.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(), -1.0f,
                                std::numeric_limits<float>::denorm_min(), 1e-40f}) {
      amaxes.insert(amaxes.begin() + static_cast<std::ptrdiff_t>(amaxes.size() / 3), special);
      amaxes.push_back(special);
    }
    for (MxScaleRule rule : kRules) {
      for (std::size_t offset = 0; offset < 17; offset += 5) {
        const std::span<const float> batch = std::span<const float>(amaxes).subspan(offset);
        std::vector<int> exponents(batch.size());
        quant::mx_shared_exponents(f, batch, rule, exponents);
        for (std::size_t i = 0; i < batch.size(); ++i) {
          ASSERT_EQ(exponents[i], quant::mx_shared_exponent(f, batch[i], rule))
              << g.name << std::hexfloat << " amax " << batch[i] << " at " << i << " of a batch from " << offset;
        }
      }
    }
  }
}

TEST(MxSharedExponent, RejectsMismatchedSizes) {
  std::vector<int> exponents(3);
  EXPECT_THROW(quant::mx_shared_exponents(load(kE4m3), std::vector<float>(4, 1.0f), MxScaleRule::floor, exponents),
               std::invalid_argument);
}

TEST(MxSharedExponent, HandWorkedValues) {
  const format::Format e4m3 = load(kE4m3);  // max finite 448 = 1.75 · 2^8
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, 448.0f, MxScaleRule::floor), 0);
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, 448.0f, MxScaleRule::round_up), 0);
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, 449.0f, MxScaleRule::floor), 0);     // clips
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, 449.0f, MxScaleRule::round_up), 1);
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, 256.0f, MxScaleRule::round_up), 0);
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, 255.0f, MxScaleRule::floor), -1);
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, 1.0f, MxScaleRule::floor), -8);
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, 1.0f, MxScaleRule::round_up), -8);
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, 1.9f, MxScaleRule::round_up), -7);   // 1.9 · 2^8 > 448
}

TEST(MxSharedExponent, ClampsToTheE8m0Range) {
  const format::Format e4m3 = load(kE4m3);
  const float tiniest = std::numeric_limits<float>::denorm_min();  // 2^−149: k would be −157
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, std::ldexp(1.0f, -119), MxScaleRule::floor), -127);  // exactly
  EXPECT_EQ(quant::mx_shared_exponent(e4m3, std::ldexp(1.0f, -120), MxScaleRule::floor), -127);  // clamped
  for (MxScaleRule rule : kRules) EXPECT_EQ(quant::mx_shared_exponent(e4m3, tiniest, rule), -127);
  const format::Format small_max = load(kE4m3Bias20);  // emax −5: 2^127 would need k = 132
  for (MxScaleRule rule : kRules) {
    EXPECT_EQ(quant::mx_shared_exponent(small_max, std::numeric_limits<float>::max(), rule), 127);
  }
}

TEST(MxSharedExponent, ZeroOrNonFiniteBlockMaximumGivesZero) {
  const format::Format e4m3 = load(kE4m3);
  for (MxScaleRule rule : kRules) {
    for (float amax : {0.0f, kNan, kInf}) EXPECT_EQ(quant::mx_shared_exponent(e4m3, amax, rule), 0) << amax;
  }
}

struct Shape {
  std::size_t rows;
  std::size_t row_length;
  std::size_t block;
};

// Full rows, short last blocks (70 = 32 + 32 + 6, 33, 31, 1), other block sizes, and enough rows
// for several parallel tasks (16 rows each).
constexpr Shape kShapes[] = {
    {3, 32, 32}, {40, 64, 32}, {40, 70, 32}, {17, 33, 32}, {50, 1, 32},
    {5, 31, 32}, {20, 96, 16}, {9, 7, 1},    {33, 100, 3}, {600, 70, 32},
};

void expect_matches_reference(const RefGrid& g, const Shape& shape, const MxOptions& o, std::uint32_t seed) {
  const auto in = mx_tensor(shape.rows * shape.row_length, seed);
  const MxRun run = run_mx(g, in, shape.row_length, o);
  const MxReference ref = reference_mx(g, in, shape.row_length, o);
  EXPECT_TRUE(bit_identical(run.out, ref.out));
  EXPECT_EQ(run.codes, ref.codes);
  EXPECT_EQ(run.stats.blocks, ref.blocks);
  if (o.rounding == Rounding::nearest_even) {
    EXPECT_EQ(run.stats.clipped_blocks, ref.clipped_blocks);
    expect_stats_match(run.stats.elements, ref.elements);
  } else {
    EXPECT_EQ(run.stats.elements.count, ref.elements.count);
    EXPECT_EQ(run.stats.elements.amax, ref.elements.amax);
  }
}

TEST(QuantizeMx, MatchesTheScalarReference) {
  for (const RefGrid& g : {kE4m3, kE2m1, kE5m2}) {
    for (MxScaleRule rule : kRules) {
      for (Rounding rounding : {Rounding::nearest_even, Rounding::stochastic, Rounding::toward_zero}) {
        for (std::size_t s = 0; s < std::size(kShapes); ++s) {
          SCOPED_TRACE(::testing::Message() << g.name << (rule == MxScaleRule::floor ? " floor" : " round_up")
                                            << " rounding " << static_cast<int>(rounding) << " shape " << s);
          expect_matches_reference(g, kShapes[s], mx_options(rule, rounding, kShapes[s].block),
                                   static_cast<std::uint32_t>(50 + s));
        }
      }
    }
  }
}

// Rows of 70 split into blocks of 32, 32 and 6: each block's code comes from its own elements only.
TEST(QuantizeMx, ShortLastBlockTakesItsScaleFromItsOwnElements) {
  std::vector<float> in(140, 0.25f);
  in[5] = 1000.0f;   // row 0, block 0: k = 9 − 8 = 1
  in[40] = -0.5f;    // row 0, block 1: k = −1 − 8 = −9
  in[66] = 3.0f;     // row 0, block 2 (elements 64..69): k = 1 − 8 = −7
  in[70 + 69] = 40.0f;  // row 1, block 2: k = 5 − 8 = −3
  const MxRun run = run_mx(kE4m3, in, 70, mx_options(MxScaleRule::floor));
  const std::vector<std::uint8_t> expected = {128, 118, 120, 117, 117, 124};  // −2 − 8 + 127 = 117 for 0.25
  EXPECT_EQ(run.codes, expected);
  EXPECT_EQ(run.stats.blocks, 6u);
  EXPECT_EQ(run.out[66], 3.0f);
  EXPECT_EQ(run.out[139], 40.0f);
}

// E4M3 blocks whose maximum is m·16 (k = −4 under floor, so the maximum scales to m·256): the
// extended-grid rounding of m·256 exceeds 448 only for m above 1.8125 (464 is a tie that goes to
// the even code of 448).
TEST(QuantizeMx, FloorRuleClipsBlocksWhoseMaximumRoundsAboveMaxFinite) {
  const float mantissas[] = {1.5f, 1.75f, 1.78f, 1.8125f, 1.82f, 1.9f, 1.99f};
  std::vector<float> in;
  for (float m : mantissas) {
    std::vector<float> block(32, 1.0f);
    block[17] = m * 16.0f;
    in.insert(in.end(), block.begin(), block.end());
  }
  const MxRun floor_run = run_mx(kE4m3, in, 32, mx_options(MxScaleRule::floor));
  EXPECT_EQ(floor_run.stats.clipped_blocks, 3u);  // 1.82, 1.9 and 1.99
  EXPECT_EQ(floor_run.stats.elements.overflow, 3u);
  EXPECT_EQ(floor_run.out[5 * 32 + 17], 28.0f);   // 1.9 · 16 saturated to 448 / 16
  const MxRun up_run = run_mx(kE4m3, in, 32, mx_options(MxScaleRule::round_up));
  EXPECT_EQ(up_run.stats.clipped_blocks, 0u);
}

// amax · 2^−k ≤ max finite and max finite is on the grid, so no rounding mode can go beyond it.
TEST(QuantizeMx, RoundUpRuleNeverClipsUnderAnyRounding) {
  auto in = mx_tensor(20'032, 61);  // 313 rows of 64
  TensorRng rng(62);
  // One maximum per block with the mantissa where floor would clip hardest.
  for (std::size_t b = 0; b < in.size(); b += 32) {
    in[b + static_cast<std::size_t>(rng.integer(0, 31))] = std::ldexp(1.999f, rng.integer(-100, 100));
  }
  for (const RefGrid& g : {kE4m3, kE2m1, kE5m2}) {
    for (Rounding rounding : format::kAllRoundings) {
      const MxRun run = run_mx(g, in, 64, mx_options(MxScaleRule::round_up, rounding));
      EXPECT_EQ(run.stats.clipped_blocks, 0u) << g.name << " rounding " << static_cast<int>(rounding);
      EXPECT_EQ(run.stats.elements.overflow, 0u) << g.name << " rounding " << static_cast<int>(rounding);
    }
  }
}

TEST(QuantizeMx, ZeroBlockUsesExponentZeroAndKeepsSignedZeros) {
  std::vector<float> in(64, 0.0f);
  for (std::size_t i = 1; i < 32; i += 2) in[i] = -0.0f;
  for (std::size_t i = 32; i < 64; ++i) in[i] = static_cast<float>(i);
  for (MxScaleRule rule : kRules) {
    const MxRun run = run_mx(kE4m3, in, 64, mx_options(rule));
    EXPECT_EQ(run.codes[0], 127);
    EXPECT_TRUE(bit_identical(std::span<const float>(run.out).first(32), std::span<const float>(in).first(32)));
  }
}

TEST(QuantizeMx, ResultsAreIdenticalForOneAndTwoThreads) {
  const auto in = mx_tensor(600 * 70, 71);
  for (Rounding rounding : {Rounding::nearest_even, Rounding::stochastic}) {
    const MxOptions o = mx_options(MxScaleRule::floor, rounding);
    MxRun one, two;
    {
      ScopedThreadCount threads(1);
      one = run_mx(kE4m3, in, 70, o);
    }
    {
      ScopedThreadCount threads(2);
      two = run_mx(kE4m3, in, 70, o);
    }
    EXPECT_TRUE(bit_identical(one.out, two.out));
    EXPECT_EQ(one.codes, two.codes);
    EXPECT_EQ(one.stats.blocks, two.stats.blocks);
    EXPECT_EQ(one.stats.clipped_blocks, two.stats.clipped_blocks);
    expect_stats_bit_identical(one.stats.elements, two.stats.elements);
  }
}

// quantize_mx quantizes rows of whole blocks several to a call: its values, codes and statistics are
// those of one quantize_scaled_blocks call per row into running totals, its former loop.
TEST(QuantizeMx, RowsSharingACallSumAsOneCallPerRow) {
  // 8 rows to a call, and 16 rows are one task (whose statistics are the whole call's).
  constexpr std::size_t kRows = 16, kLength = 128, kBlock = 32, kBlocks = kLength / kBlock;
  const auto in = log_uniform_tensor(kRows * kLength, 79, -20, 20);  // sums of squares that round
  const format::Format f = load(kE4m3);
  for (Rounding rounding : {Rounding::nearest_even, Rounding::stochastic}) {
    const MxOptions o = mx_options(MxScaleRule::floor, rounding);
    const MxRun whole = run_mx(kE4m3, in, kLength, o);
    std::vector<float> out(in.size());
    std::vector<std::uint8_t> codes;
    quant::QuantStats stats;
    std::uint64_t clipped = 0;
    for (std::size_t r = 0; r < kRows; ++r) {
      const float* row = in.data() + r * kLength;
      int exponents[kBlocks];
      std::uint64_t overflows[kBlocks];
      std::uint32_t words[kLength];
      for (std::size_t b = 0; b < kBlocks; ++b) {
        float amax = 0.0f;
        for (std::size_t i = 0; i < kBlock; ++i) amax = std::max(amax, std::fabs(row[b * kBlock + i]));
        exponents[b] = quant::mx_shared_exponent(f, amax, o.rule);
        codes.push_back(static_cast<std::uint8_t>(exponents[b] + 127));
      }
      for (std::size_t i = 0; i < kLength; ++i) {
        words[i] = format::philox_word(o.seed, o.stream, o.first_index + r * kLength + i);
      }
      quant::quantize_scaled_blocks(f, rounding, row, out.data() + r * kLength, kLength, kBlock, exponents, words,
                                    overflows, stats);
      for (const std::uint64_t overflowed : overflows) clipped += overflowed > 0;
    }
    EXPECT_TRUE(bit_identical(whole.out, out));
    EXPECT_EQ(whole.codes, codes);
    EXPECT_EQ(whole.stats.clipped_blocks, clipped);
    expect_stats_bit_identical(whole.stats.elements, stats);
  }
}

// quantize_scaled_blocks over several segments (quantize_mx's rows of whole blocks, which share a
// call) gives the values, overflows and statistics of one call per segment into the same totals.
TEST(QuantizeScaledBlocks, ASegmentSumsAsACallOfItsOwn) {
  constexpr std::size_t kBlock = 32, kSegment = 4 * kBlock, kSegments = 6, n = kSegment * kSegments;
  // Magnitudes across 2^±20, so that the double sums of squares round and their order shows.
  const auto in = log_uniform_tensor(n, 77, -20, 20);
  const format::Format f = load(kE4m3);
  std::vector<float> amax(n / kBlock);
  for (std::size_t i = 0; i < n; ++i) amax[i / kBlock] = std::max(amax[i / kBlock], std::fabs(in[i]));
  std::vector<int> exponents(amax.size());
  quant::mx_shared_exponents(f, amax, MxScaleRule::floor, exponents);  // the floor rule clips some blocks
  std::vector<std::uint32_t> words(n);
  for (std::size_t i = 0; i < n; ++i) words[i] = format::philox_word(9, 1, i);
  for (Rounding rounding : {Rounding::nearest_even, Rounding::stochastic}) {
    std::vector<float> together(n), apart(n);
    std::vector<std::uint64_t> together_overflows(exponents.size()), apart_overflows(exponents.size());
    quant::QuantStats together_stats, apart_stats;
    quant::quantize_scaled_blocks(f, rounding, in.data(), together.data(), n, kBlock, exponents.data(), words.data(),
                                  together_overflows.data(), together_stats, kSegment);
    for (std::size_t begin = 0; begin < n; begin += kSegment) {
      const std::size_t b = begin / kBlock;
      quant::quantize_scaled_blocks(f, rounding, in.data() + begin, apart.data() + begin, kSegment, kBlock,
                                    exponents.data() + b, words.data() + begin, apart_overflows.data() + b,
                                    apart_stats);
    }
    EXPECT_TRUE(bit_identical(together, apart));
    EXPECT_EQ(together_overflows, apart_overflows);
    EXPECT_GT(together_stats.overflow, 0u);
    expect_stats_bit_identical(together_stats, apart_stats);
  }
}

TEST(QuantizeMx, EmptyInputHasNoBlocks) {
  std::vector<float> none;
  const auto stats = quant::quantize_mx(load(kE4m3), none, none, 32, mx_options(MxScaleRule::floor));
  EXPECT_EQ(stats.blocks, 0u);
  EXPECT_EQ(stats.elements.count, 0u);
}

TEST(QuantizeMx, RejectsBadShapes) {
  const format::Format f = load(kE4m3);
  std::vector<float> in(96, 1.0f), out(96), short_out(95);
  std::vector<std::uint8_t> codes_3(3), codes_2(2), codes_4(4);
  const MxOptions ok = mx_options(MxScaleRule::floor);
  EXPECT_NO_THROW(quant::quantize_mx(f, in, out, 96, ok, codes_3));
  EXPECT_THROW(quant::quantize_mx(f, in, out, 40, ok), std::invalid_argument);   // 40 does not divide 96
  EXPECT_THROW(quant::quantize_mx(f, in, out, 0, ok), std::invalid_argument);
  EXPECT_THROW(quant::quantize_mx(f, in, short_out, 96, ok), std::invalid_argument);
  EXPECT_THROW(quant::quantize_mx(f, in, out, 96, ok, codes_2), std::invalid_argument);
  EXPECT_THROW(quant::quantize_mx(f, in, out, 96, ok, codes_4), std::invalid_argument);
  MxOptions zero_block = ok;
  zero_block.block_size = 0;
  EXPECT_THROW(quant::quantize_mx(f, in, out, 96, zero_block), std::invalid_argument);
}

// Spec: underflow counts "nonzero finite x whose x·s rounded below the smallest positive value".
// In a block whose maximum is 2^100 (k = 92), 2^−60 · 2^−92 = 2^−152 is already zero in float32.
TEST(QuantizeMx, ElementWhoseScaledProductUnderflowsFloat32CountsAsUnderflow) {
  std::vector<float> in(32, 0.0f);
  in[0] = 0x1p100f;
  in[1] = 0x1p-60f;
  const MxRun run = run_mx(kE4m3, in, 32, mx_options(MxScaleRule::floor));
  ASSERT_EQ(run.codes[0], 92 + 127);
  EXPECT_EQ(run.out[1], 0.0f);
  EXPECT_EQ(run.stats.elements.underflow, 1u);
}

// "The block scale is taken from the finite elements": an Inf must not decide the block's k.
// Here the finite maximum 2^20 gives k = 20 − 8 = 12 (code 139) under both rules, so 2^20 and 1
// are both exact in E4M3 after scaling (2^8 and 2^−12).
TEST(QuantizeMx, BlockScaleIgnoresInfElements) {
  std::vector<float> in(32, 1.0f);
  in[3] = kInf;
  in[9] = 1048576.0f;  // 2^20
  for (MxScaleRule rule : kRules) {
    const MxRun run = run_mx(kE4m3, in, 32, mx_options(rule));
    EXPECT_EQ(run.codes[0], 139) << "k should come from the finite maximum 2^20, not the Inf";
    EXPECT_EQ(run.out[9], 1048576.0f);
    EXPECT_EQ(run.out[0], 0.0f) << "1 · 2^−12 is below E4M3's smallest subnormal 2^−9";
    EXPECT_TRUE(std::isnan(run.out[3])) << "E4M3 has no Inf: an Inf element becomes NaN";
  }
}

}  // namespace
}  // namespace altgrad::quant_test
