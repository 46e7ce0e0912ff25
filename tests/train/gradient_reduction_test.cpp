// The low-precision gradient reduction (train/gradient_reduction.hpp) against a reference written
// here from its definition, one value at a time: A over every micro-batch, s = 2^k·fl(1/fl(√M))
// with k found by doubling and halving, q_m = round(fl(g_m·s)) with format/'s scalar rounding, the
// left fold in micro-batch order, ĝ = fl(P / fl(s·M)). Tensors with outliers, zeros, ties,
// saturation, flushes and NaN or ±Inf, for both sums, M = 1, 2, 3 and E4M3, E5M2 and E2M1 (a
// format without NaN or Inf).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "train/gradient_reduction.hpp"

namespace altgrad::train {
namespace {

using config::GradReduceSum;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

format::Format reduction_format(const std::string& name) { return format::make_format(format::parse_format(name)); }

float round_reference(const format::Format& f, float x, ReductionStats& stats) {
  format::RoundFlags flags;
  const float r = format::bits_float(format::round_bits(f, format::Rounding::nearest_even, format::float_bits(x), 0, flags));
  ++stats.roundings;
  stats.overflow += flags.overflow ? 1 : 0;
  stats.underflow += flags.underflow ? 1 : 0;
  return r;
}

// The definition, for one tensor: g[m][i]. `scale` holds the previous s and receives this one.
std::vector<float> reduce_reference(const format::Format& f, GradReduceSum sum, const std::vector<std::vector<float>>& g,
                                    float& scale, ReductionStats& stats) {
  const int M = static_cast<int>(g.size());
  const std::size_t n = g[0].size();
  long double A = 0.0L;
  for (const auto& gm : g) {
    for (const float v : gm) A = std::isnan(v) ? INFINITY : std::max(A, static_cast<long double>(std::fabs(v)));
  }
  if (std::isfinite(A) && A > 0.0L) {
    const long double max_finite = f.max_finite();
    int k = 0;
    while (std::ldexp(A, k) > max_finite) --k;
    while (std::ldexp(A, k + 1) <= max_finite) ++k;
    k = std::min(k, 127);
    const float root = std::sqrt(static_cast<float>(M));
    scale = std::ldexp(1.0f / root, k);
  }
  const float s = scale;
  std::vector<float> partial(n);
  for (int m = 0; m < M; ++m) {
    for (std::size_t i = 0; i < n; ++i) {
      const float q = round_reference(f, g[m][i] * s, stats);
      if (m == 0) {
        partial[i] = q;
      } else if (sum == GradReduceSum::fp32) {
        partial[i] = partial[i] + q;
      } else {
        partial[i] = round_reference(f, partial[i] + q, stats);
      }
    }
  }
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = partial[i] / (s * static_cast<float>(M));
    for (int m = 0; m < M; ++m) {
      if (!std::isfinite(g[m][i])) out[i] = kNaN;
    }
  }
  return out;
}

// Bits of a float, so that -0 differs from +0 and every NaN equals every NaN.
std::uint32_t bits_of(float x) { return std::isnan(x) ? 0x7FC00000u : format::float_bits(x); }

// Tensors with: normal values; an outlier 2^20 times the rest (they flush); all zeros (and -0);
// values equal across the micro-batches near the top of the range (the partial sums saturate); a
// tensor of exact ties at s = 1 (A = 448 with M = 1); one element of every binade of float.
std::vector<std::vector<std::vector<float>>> reduction_tensors(int M, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<std::vector<float>>> tensors(6, std::vector<std::vector<float>>(M));
  for (int m = 0; m < M; ++m) {
    for (int i = 0; i < 200; ++i) tensors[0][m].push_back(normal(random) * 1e-3f);
    for (int i = 0; i < 64; ++i) tensors[1][m].push_back(normal(random) * 1e-4f);
    tensors[1][m][7] = m == 0 ? 1e-4f * 1048576.0f : 0.5f;
    tensors[2][m] = {0.0f, -0.0f, 0.0f};
    for (int i = 0; i < 16; ++i) tensors[3][m].push_back((i % 2 ? -1.0f : 1.0f) * (300.0f + 10.0f * i + m));
    tensors[4][m] = {448.0f, 1.0625f, 1.1875f, -1.0625f, 17.0f, 19.0f, 0.0009765625f * 1.5f, 3.0f / 1024.0f};
    for (int e = -149; e < 128; e += 3) tensors[5][m].push_back(std::ldexp(m % 2 ? -1.0f : 1.0f, e) * 1.3f);
  }
  return tensors;
}

struct ReductionRun {
  std::vector<float> out;
  std::vector<float> scales;
  ReductionStats stats;
};

// The reducer over the tensors laid out one after another, after a gap of 3 elements it must leave.
ReductionRun run_reducer(GradientReduction& reducer, const std::vector<std::vector<std::vector<float>>>& tensors,
                         std::size_t size) {
  const int M = reducer.micro_batches();
  for (int m = 0; m < M; ++m) {
    std::size_t at = 3;
    for (const auto& t : tensors) {
      std::copy(t[m].begin(), t[m].end(), reducer.micro_batch(m).begin() + static_cast<std::ptrdiff_t>(at));
      at += t[m].size();
    }
  }
  ReductionRun result;
  result.out.assign(size, -7.0f);
  result.stats = reducer.reduce(result.out);
  result.scales.assign(reducer.scales().begin(), reducer.scales().end());
  return result;
}

void expect_reference(const std::string& format_name, GradReduceSum sum, int M) {
  SCOPED_TRACE(format_name + (sum == GradReduceSum::fp32 ? " fp32 sum" : " format sum") + ", M = " + std::to_string(M));
  const format::Format f = reduction_format(format_name);
  auto tensors = reduction_tensors(M, 17u + static_cast<std::uint32_t>(M));
  std::vector<model::Slot> slots;
  std::size_t size = 3;
  for (const auto& t : tensors) {
    slots.push_back({size, t[0].size()});
    size += t[0].size();
  }
  slots.push_back({size, 0});  // an absent tensor (a bias when bias = false)
  GradientReduction reducer(f, sum, slots, size, M);
  std::vector<float> scales(tensors.size(), 1.0f);

  // Step 1: every tensor finite. Step 2: NaN in one micro-batch of tensor 0 and +Inf in the last
  // of tensor 1, which keep their step-1 scales; the others take new data.
  for (int step = 0; step < 2; ++step) {
    if (step == 1) {
      tensors = reduction_tensors(M, 99u);
      tensors[0][0][5] = kNaN;
      tensors[1][M - 1][9] = kInf;
      tensors[1][0][10] = -kInf;
    }
    const ReductionRun got = run_reducer(reducer, tensors, size);
    ReductionStats want_stats;
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      const std::vector<float> want = reduce_reference(f, sum, tensors[t], scales[t], want_stats);
      EXPECT_EQ(got.scales[t], scales[t]) << "tensor " << t << " step " << step;
      for (std::size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(bits_of(got.out[slots[t].offset + i]), bits_of(want[i]))
            << "tensor " << t << " element " << i << " step " << step << ": " << got.out[slots[t].offset + i]
            << " vs " << want[i];
      }
    }
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(got.out[i], -7.0f);
    EXPECT_EQ(got.stats.roundings, want_stats.roundings);
    EXPECT_EQ(got.stats.overflow, want_stats.overflow);
    EXPECT_EQ(got.stats.underflow, want_stats.underflow);
  }
}

TEST(GradientReduction, MatchesTheDefinitionForBothSums) {
  for (const char* name : {"e4m3", "e5m2", "e2m1"}) {
    for (const GradReduceSum sum : {GradReduceSum::in_format, GradReduceSum::fp32}) {
      for (const int M : {1, 2, 3}) expect_reference(name, sum, M);
    }
  }
}

// Hand-worked values, so that the reference above is not the only witness of the definition.
TEST(GradientReduction, HandWorkedValues) {
  const format::Format e4m3 = reduction_format("e4m3");
  {
    // M = 1, A = 3: k = floor(log2(448/3)) = 7, s = 128; q = 128, 384, round(−38.4) = −40.
    GradientReduction reducer(e4m3, GradReduceSum::in_format, {{0, 3}}, 3, 1);
    const std::vector<float> g = {1.0f, 3.0f, -0.3f};
    std::copy(g.begin(), g.end(), reducer.micro_batch(0).begin());
    std::vector<float> out(3);
    const ReductionStats stats = reducer.reduce(out);
    EXPECT_EQ(reducer.scales()[0], 128.0f);
    EXPECT_EQ(out, (std::vector<float>{1.0f, 3.0f, -0.3125f}));
    EXPECT_EQ(stats.roundings, 3u);
  }
  {
    // M = 2, A = 1: k = 8, s = 256·fl(1/fl(√2)) ≈ 181.02; each q = 176 (E4M3 steps by 16 in
    // [128, 256)); the format sum 352 is on the grid (steps of 32 in [256, 448]).
    const float s = 256.0f * (1.0f / std::sqrt(2.0f));
    for (const GradReduceSum sum : {GradReduceSum::in_format, GradReduceSum::fp32}) {
      GradientReduction reducer(e4m3, sum, {{0, 2}}, 2, 2);
      reducer.micro_batch(0)[0] = 1.0f;
      reducer.micro_batch(1)[0] = 1.0f;
      reducer.micro_batch(0)[1] = 0.75f;
      reducer.micro_batch(1)[1] = 0.8f;
      std::vector<float> out(2);
      reducer.reduce(out);
      EXPECT_EQ(reducer.scales()[0], s);
      EXPECT_EQ(out[0], 352.0f / (s * 2.0f));
      // 0.75·s = 135.76 → 128 and 0.8·s = 144.8 → 144; 272 lies halfway between 256 and 288: the
      // format sum rounds it to the even code, 256, the FP32 sum keeps 272.
      EXPECT_EQ(out[1], (sum == GradReduceSum::fp32 ? 272.0f : 256.0f) / (s * 2.0f));
    }
  }
  {
    // M = 3, A = 1: s = 256·fl(1/fl(√3)) ≈ 147.8, each q = 144; 288 is on the grid, and 432 lies
    // halfway between 416 and 448: to the even code, 448.
    GradientReduction reducer(e4m3, GradReduceSum::in_format, {{0, 1}}, 1, 3);
    for (int m = 0; m < 3; ++m) reducer.micro_batch(m)[0] = 1.0f;
    std::vector<float> out(1);
    const ReductionStats stats = reducer.reduce(out);
    const float s = 256.0f * (1.0f / std::sqrt(3.0f));
    EXPECT_EQ(reducer.scales()[0], s);
    EXPECT_EQ(out[0], 448.0f / (s * 3.0f));
    EXPECT_EQ(stats.overflow, 0u);
    EXPECT_EQ(stats.roundings, 5u);
  }
  {
    // M = 2, coherent signs at the top: A = 1.75, k = 8, q = round(316.8) = 320 twice; the format
    // sum 640 saturates at 448, the FP32 sum keeps it.
    for (const GradReduceSum sum : {GradReduceSum::in_format, GradReduceSum::fp32}) {
      GradientReduction reducer(e4m3, sum, {{0, 1}}, 1, 2);
      reducer.micro_batch(0)[0] = 1.75f;
      reducer.micro_batch(1)[0] = 1.75f;
      std::vector<float> out(1);
      const ReductionStats stats = reducer.reduce(out);
      const float s = 256.0f * (1.0f / std::sqrt(2.0f));
      EXPECT_EQ(out[0], (sum == GradReduceSum::fp32 ? 640.0f : 448.0f) / (s * 2.0f));
      EXPECT_EQ(stats.overflow, sum == GradReduceSum::fp32 ? 0u : 1u);
    }
  }
}

TEST(GradientReduction, AllZeroTensorsGiveZerosAndKeepTheScale) {
  GradientReduction reducer(reduction_format("e4m3"), GradReduceSum::in_format, {{0, 2}}, 2, 2);
  reducer.micro_batch(0)[0] = -0.0f;
  reducer.micro_batch(1)[0] = -0.0f;
  std::vector<float> out(2, 5.0f);
  reducer.reduce(out);
  EXPECT_EQ(reducer.scales()[0], 1.0f);
  EXPECT_TRUE(std::signbit(out[0]) && out[0] == 0.0f);
  EXPECT_TRUE(!std::signbit(out[1]) && out[1] == 0.0f);
}

TEST(GradientReduction, RefusesAnUnsignedFormatAndBadSizes) {
  EXPECT_THROW(GradientReduction(reduction_format("e8m0fnu"), GradReduceSum::in_format, {{0, 1}}, 1, 1),
               std::invalid_argument);
  EXPECT_THROW(GradientReduction(reduction_format("e4m3"), GradReduceSum::in_format, {{0, 2}}, 1, 1),
               std::invalid_argument);
  EXPECT_THROW(GradientReduction(reduction_format("e4m3"), GradReduceSum::in_format, {{0, 1}}, 1, 0),
               std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::train
