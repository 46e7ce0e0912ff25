// QuantStats from quantize() against the "Statistics" table of docs/formats.md, evaluated by a
// scalar loop (reference_stats.hpp) on tensors with planted overflows, underflows, ties, zeros,
// NaN and ±Inf, at scales other than 1, for saturating and overflow=inf formats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "support/special_floats.hpp"
#include "determinism.hpp"
#include "format/codec.hpp"
#include "format/philox.hpp"
#include "quant/quantize.hpp"
#include "reference_grid.hpp"
#include "reference_stats.hpp"
#include "test_tensors.hpp"

namespace altgrad::quant_test {
namespace {

using test_support::kInf;
using test_support::kNan;

using format::Rounding;


constexpr std::size_t kSizes[] = {0, 1, 1023, 1025, 16385, 2 * 16384 + 3, 100'000};
const float kStatisticsScales[] = {1.0f, 0.37f, 1000.0f, 0x1p-10f};

// An x whose scaled product fl(x·s) is exactly `target`, where one lies within a few ulps of
// target/s; otherwise the nearest try (the reference works from fl(x·s) either way).
float preimage(float target, float scale) {
  float x = target / scale;
  for (int tries = 0; tries < 8 && x * scale != target; ++tries) {
    x = std::nextafter(x, x * scale < target ? kInf : -kInf);
  }
  return x;
}

// Scaled values on either side of every statistic's edge: max finite, the tie above it (an
// overflow only where max finite's code is odd), clear overflows, the tie at half the smallest
// positive value (to zero: underflow) and just above it (not), and values inside the grid.
std::vector<float> edge_targets(const RefGrid& g) {
  const float max = static_cast<float>(g.max_finite);
  const float top_step = static_cast<float>(std::ldexp(1.0L, floor_log2(g.max_finite) - g.mantissa_bits));
  const float tiny = static_cast<float>(min_positive(g));
  const float magnitudes[] = {max,          max + top_step / 2, std::nextafter(max + top_step / 2, kInf),
                              3 * max,      max * 1.01f,        tiny / 2,
                              std::nextafter(tiny / 2, kInf),   tiny / 4, tiny, tiny * 0.75f, 1.0f};
  std::vector<float> targets;
  for (float m : magnitudes) targets.insert(targets.end(), {m, -m});
  return targets;
}

// Log-uniform values whose scaled products span [smallest/16, 4·max], with the edge cases and
// the non-finite inputs planted every 29 elements and at the tile and chunk boundaries.
std::vector<float> planted_tensor(const RefGrid& g, std::size_t n, float scale, std::uint32_t seed) {
  TensorRng rng(seed);
  const int low = floor_log2(min_positive(g)) - 4, high = floor_log2(g.max_finite) + 2;
  std::vector<float> x(n);
  for (float& v : x) v = rng.log_uniform(low, high) / scale;
  std::vector<float> planted = {kNan, kInf, -kInf, 0.0f, -0.0f};
  for (float t : edge_targets(g)) planted.push_back(preimage(t, scale));
  std::size_t next = 0;  // cycles through every planted value in turn
  const auto plant = [&](std::size_t i) { x[i] = planted[next++ % planted.size()]; };
  for (std::size_t i = 0; i < n; i += 29) plant(i);
  for (std::size_t i : {1u, 1023u, 1024u, 16383u, 16384u, 16385u, 32767u, 32768u}) {
    if (i < n) plant(i);
  }
  if (n > 0) plant(n - 1);
  return x;
}

ReferenceStats reference_stats(const RefGrid& g, const std::vector<float>& x, float scale) {
  const format::Format f = load(g);
  ReferenceStats ref;
  for (float v : x) {
    const float scaled = v * scale;
    const float y = format::decode(f, format::encode(f, Rounding::nearest_even, scaled)) / scale;
    ref.add(g, v, scaled, y);
  }
  return ref;
}

quant::QuantizeOptions options(float scale, Rounding r = Rounding::nearest_even) {
  quant::QuantizeOptions o;
  o.scale = scale;
  o.rounding = r;
  o.seed = 11;
  o.stream = 2;
  o.first_index = 6;
  return o;
}

quant::QuantStats run(const RefGrid& g, const std::vector<float>& x, const quant::QuantizeOptions& o) {
  std::vector<float> out(x.size());
  return quant::quantize(load(g), x, out, o);
}

TEST(QuantStats, CountsAndAmaxEqualTheScalarReferenceExactly) {
  for (const RefGrid& g : {kE4m3, kE4m3Inf, kE5m2, kE5m2Inf, kE2m1, kE3m2, kE4m3fnuz, kE5m2NoSubnormals}) {
    for (float scale : kStatisticsScales) {
      for (std::size_t n : kSizes) {
        SCOPED_TRACE(::testing::Message() << g.name << " scale " << scale << " n " << n);
        const auto x = planted_tensor(g, n, scale, static_cast<std::uint32_t>(n) + 1);
        const quant::QuantStats got = run(g, x, options(scale));
        const ReferenceStats want = reference_stats(g, x, scale);
        EXPECT_EQ(got.count, want.count);
        EXPECT_EQ(got.overflow, want.overflow);
        EXPECT_EQ(got.underflow, want.underflow);
        EXPECT_EQ(got.nan_inputs, want.nan_inputs);
        EXPECT_EQ(got.inf_inputs, want.inf_inputs);
        EXPECT_EQ(got.zero_inputs, want.zero_inputs);
        EXPECT_EQ(got.amax, want.amax);
      }
    }
  }
}

// The planted tensors must actually exercise every counter, or the exact matches above are cheap.
TEST(QuantStats, PlantedTensorsHitEveryCounter) {
  for (const RefGrid& g : {kE4m3, kE5m2NoSubnormals}) {
    const ReferenceStats want = reference_stats(g, planted_tensor(g, 100'000, 0.37f, 5), 0.37f);
    EXPECT_GT(want.overflow, 100u);
    EXPECT_GT(want.underflow, 100u);
    EXPECT_GT(want.nan_inputs, 100u);
    EXPECT_GT(want.inf_inputs, 100u);
    EXPECT_GT(want.zero_inputs, 100u);
  }
}

TEST(QuantStats, SumsAndRelativeErrorMatchALongDoubleReference) {
  for (const RefGrid& g : {kE4m3, kE5m2, kE5m2Inf, kE2m1, kE4m3fnuz, kE5m2NoSubnormals}) {
    for (float scale : kStatisticsScales) {
      for (std::size_t n : kSizes) {
        SCOPED_TRACE(::testing::Message() << g.name << " scale " << scale << " n " << n);
        const auto x = planted_tensor(g, n, scale, static_cast<std::uint32_t>(n) + 2);
        const quant::QuantStats got = run(g, x, options(scale));
        const ReferenceStats want = reference_stats(g, x, scale);
        EXPECT_TRUE(close_relative(got.sum_sq_error, want.sum_sq_error, 1e-12));
        EXPECT_TRUE(close_relative(got.sum_sq_input, want.sum_sq_input, 1e-12));
        const long double relative = want.sum_sq_input > 0 ? std::sqrt(want.sum_sq_error / want.sum_sq_input) : 0.0L;
        EXPECT_TRUE(close_relative(got.relative_error(), relative, 1e-12));
      }
    }
  }
}

TEST(QuantStats, RelativeErrorOfAnAllZeroTensorIsZero) {
  const std::vector<float> zeros(1000, 0.0f);
  const quant::QuantStats got = run(kE4m3, zeros, options(1.0f));
  EXPECT_EQ(got.sum_sq_input, 0.0);
  EXPECT_EQ(got.relative_error(), 0.0);
}

TEST(QuantStats, RelativeErrorIsTheRootOfTheRatioOfSums) {
  quant::QuantStats s;
  s.sum_sq_error = 2.0;
  s.sum_sq_input = 8.0;
  EXPECT_EQ(s.relative_error(), 0.5);
}

TEST(QuantStats, AllFieldsAreBitIdenticalForOneAndTwoThreads) {
  const auto x = planted_tensor(kE4m3, 100'003, 0.37f, 9);
  for (Rounding r : {Rounding::nearest_even, Rounding::stochastic}) {
    quant::QuantStats one, two;
    {
      ScopedThreadCount threads(1);
      one = run(kE4m3, x, options(0.37f, r));
    }
    {
      ScopedThreadCount threads(2);
      two = run(kE4m3, x, options(0.37f, r));
    }
    expect_stats_bit_identical(one, two);
  }
}

TEST(QuantStats, InPlaceEqualsOutOfPlace) {
  const format::Format f = load(kE4m3);
  const auto x = planted_tensor(kE4m3, 40'000, 3.0f, 10);
  for (Rounding r : {Rounding::nearest_even, Rounding::stochastic}) {
    std::vector<float> out(x.size());
    std::vector<std::uint64_t> histogram_out(256), histogram_in(256);
    auto o = options(3.0f, r);
    o.code_histogram = histogram_out;
    const auto out_of_place = quant::quantize(f, x, out, o);
    std::vector<float> data = x;
    o.code_histogram = histogram_in;
    const auto in_place = quant::quantize_in_place(f, data, o);
    EXPECT_TRUE(bit_identical(data, out));
    expect_stats_bit_identical(in_place, out_of_place);
    EXPECT_EQ(histogram_in, histogram_out);
  }
}

struct HistogramCase {
  RefGrid grid;
  std::size_t bins;  // 2^(bits per code)
};

// The histogram must count the code each element was encoded to (the format layer's encode of
// fl(x·s) with the element's Philox word), and add to what the array already holds.
TEST(QuantStats, CodeHistogramCountsTheEncodedCodesAndAccumulates) {
  const HistogramCase cases[] = {{kE4m3, 256}, {kE2m1, 16}, {kE5m2, 256}, {kE4m3fnuz, 256}};
  for (const auto& [g, bins] : cases) {
    const format::Format f = load(g);
    for (Rounding r : {Rounding::nearest_even, Rounding::stochastic}) {
      const float scale = 0.37f;
      const auto x = planted_tensor(g, 40'000, scale, 12);
      const auto o = options(scale, r);
      std::vector<std::uint64_t> expected(bins, 0);
      for (std::size_t i = 0; i < x.size(); ++i) {
        ++expected[format::encode(f, r, x[i] * scale, format::philox_word(o.seed, o.stream, o.first_index + i))];
      }
      // Two calls on halves, the second continuing the element indices: counts add up.
      std::vector<std::uint64_t> histogram(bins, 0);
      const std::size_t half = x.size() / 2;
      std::vector<float> out(x.size());
      auto first = o, second = o;
      first.code_histogram = histogram;
      second.code_histogram = histogram;
      second.first_index += half;
      const std::span<const float> in(x);
      const std::span<float> result(out);
      const auto s1 = quant::quantize(f, in.first(half), result.first(half), first);
      const auto s2 = quant::quantize(f, in.subspan(half), result.subspan(half), second);
      EXPECT_EQ(histogram, expected) << g.name;
      EXPECT_EQ(std::accumulate(histogram.begin(), histogram.end(), std::uint64_t{0}), s1.count + s2.count);
    }
  }
}

TEST(QuantStats, CodeHistogramNeedsANarrowFormatAndOneBinPerCode) {
  const std::vector<float> x(100, 1.0f);
  std::vector<float> out(100);
  const auto with_bins = [&](const RefGrid& g, std::size_t bins) {
    std::vector<std::uint64_t> histogram(bins);
    auto o = options(1.0f);
    o.code_histogram = histogram;
    quant::quantize(load(g), x, out, o);
  };
  EXPECT_THROW(with_bins(kBf16, 65536), std::invalid_argument);
  EXPECT_THROW(with_bins(kE4m3, 255), std::invalid_argument);
  EXPECT_THROW(with_bins(kE4m3, 257), std::invalid_argument);
  EXPECT_THROW(with_bins(kE2m1, 256), std::invalid_argument);
  EXPECT_NO_THROW(with_bins(kE4m3, 256));
  EXPECT_NO_THROW(with_bins(kE2m1, 16));
  std::vector<std::uint64_t> fp16_bins(65536);
  auto o = options(1.0f);
  o.code_histogram = fp16_bins;
  EXPECT_THROW(quant::quantize(load("fp16"), x, out, o), std::invalid_argument);
}

TEST(QuantStats, MismatchedInputAndOutputSizesThrow) {
  const std::vector<float> x(100, 1.0f);
  std::vector<float> shorter(99), longer(101);
  EXPECT_THROW(quant::quantize(load(kE4m3), x, shorter, options(1.0f)), std::invalid_argument);
  EXPECT_THROW(quant::quantize(load(kE4m3), x, longer, options(1.0f)), std::invalid_argument);
}

// The scaled product can leave float32's range although x is finite, e.g. under a delayed scale
// set by much smaller earlier amaxes. The statistics are defined on x: "nonzero finite x whose
// x·s rounded below the smallest positive value" and "finite x whose x·s rounded beyond max finite".
TEST(QuantStats, FiniteInputWhoseScaledProductUnderflowsFloat32CountsAsUnderflow) {
  const std::vector<float> x = {0x1p-35f};  // x·2^−120 = 2^−155: zero in float32
  const quant::QuantStats got = run(kE4m3, x, options(0x1p-120f));
  EXPECT_EQ(got.underflow, 1u);
}

TEST(QuantStats, FiniteInputWhoseScaledProductOverflowsFloat32CountsAsOverflow) {
  const std::vector<float> x = {0x1p30f};  // x·2^100 = 2^130: Inf in float32
  const quant::QuantStats got = run(kE4m3, x, options(0x1p100f));
  EXPECT_EQ(got.overflow, 1u);
  EXPECT_EQ(got.inf_inputs, 0u);
}

// "overflow=saturate (default): ±max finite"; "saturation applies to finite values only, so an
// Inf in a tensor stays visible downstream": a finite x must not come back as NaN.
TEST(QuantStats, FiniteInputWhoseScaledProductOverflowsFloat32Saturates) {
  const std::vector<float> x = {0x1p30f, -0x1p30f};
  std::vector<float> out(2);
  quant::quantize(load(kE4m3), x, out, options(0x1p100f));
  EXPECT_EQ(out[0], 448.0f * 0x1p-100f);
  EXPECT_EQ(out[1], -448.0f * 0x1p-100f);
}

// sum_sq_error counts a result that is not finite as an infinite error: under e4m3,overflow=inf a
// finite x that overflows has x̂ = NaN (E4M3 has no Inf), and the sum must say "infinitely wrong"
// rather than become NaN.
TEST(QuantStats, AResultThatIsNotFiniteIsAnInfiniteError) {
  const std::vector<float> x = {1000.0f, 1.0f};
  std::vector<float> out(2);
  const quant::QuantStats got = quant::quantize(load(kE4m3Inf), x, out, options(1.0f));
  ASSERT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(got.overflow, 1u);
  EXPECT_EQ(got.sum_sq_error, std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace altgrad::quant_test
