// Stochastic rounding through quant::quantize, checked against the spec's definition: the result
// is one of the two grid neighbours of x, up with probability (x − lo)/(hi − lo) (`stochastic`) or
// 1/2 (`stochastic_equal`), drawn from Philox so that the bits never depend on threads or chunking.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "determinism.hpp"
#include "format/codec.hpp"
#include "format/philox.hpp"
#include "quant/quantize.hpp"
#include "reference_grid.hpp"
#include "test_tensors.hpp"

namespace altgrad::quant_test {
namespace {

using format::Rounding;

constexpr Rounding kStochasticModes[] = {Rounding::stochastic, Rounding::stochastic_equal};
constexpr std::size_t kDraws = 100'000;

// χ² critical values at p = 1e-6 (upper tail): a correct generator fails once in a million seeds.
constexpr double kChiSquare6Dof = 38.26;
constexpr double kChiSquare8Dof = 42.70;

quant::QuantizeOptions stochastic_options(Rounding r, std::uint64_t seed, std::uint64_t stream = 0,
                                          std::uint64_t first_index = 0, float scale = 1.0f) {
  quant::QuantizeOptions o;
  o.rounding = r;
  o.seed = seed;
  o.stream = stream;
  o.first_index = first_index;
  o.scale = scale;
  return o;
}

std::vector<float> quantized(const format::Format& f, const std::vector<float>& in,
                             const quant::QuantizeOptions& o) {
  std::vector<float> out(in.size());
  quant::quantize(f, in, out, o);
  return out;
}

// Values up to max finite: larger ones are halved until they fit, so none overflows.
std::vector<float> in_range_tensor(const RefGrid& g, std::size_t n, std::uint32_t seed) {
  auto x = log_uniform_tensor(n, seed, floor_log2(min_positive(g)) - 2, floor_log2(g.max_finite));
  for (float& v : x) {
    while (std::fabs(v) > g.max_finite) v *= 0.5f;
  }
  return x;
}

// How many of the outputs moved away from zero to the upper neighbour of |x|. For negative x this
// is the spec's "down" event, whose probability (hi − x)/(hi − lo) equals (|x| − |lo|)/step as well.
std::size_t count_away_from_zero(const RefGrid& g, float x, const std::vector<float>& out) {
  const Bracket b = bracket(g, std::fabs(static_cast<long double>(x)));
  std::size_t away = 0;
  for (float y : out) away += std::fabs(static_cast<long double>(y)) == b.hi;
  return away;
}

long double probability_away(const RefGrid& g, float x) {
  const long double a = std::fabs(static_cast<long double>(x));
  const Bracket b = bracket(g, a);
  return (a - b.lo) / (b.hi - b.lo);
}

TEST(StochasticRounding, EveryOutputIsOneOfTheTwoGridNeighbours) {
  for (const RefGrid& g : {kE4m3, kE5m2, kE2m1, kE3m2, kE5m2NoSubnormals, kBf16}) {
    const format::Format f = load(g);
    const auto x = in_range_tensor(g, 20'000, 11);
    for (Rounding r : kStochasticModes) {
      const auto y = quantized(f, x, stochastic_options(r, 42));
      std::size_t up = 0, down = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const Bracket b = bracket(g, std::fabs(static_cast<long double>(x[i])));
        const long double got = static_cast<long double>(y[i]);
        const long double lo = std::copysign(b.lo, static_cast<long double>(x[i]));
        const long double hi = std::copysign(b.hi, static_cast<long double>(x[i]));
        ASSERT_TRUE(got == lo || got == hi)
            << g.name << " x=" << x[i] << " gave " << y[i] << ", neighbours " << static_cast<double>(lo)
            << " and " << static_cast<double>(hi);
        if (b.lo != b.hi) (got == hi ? up : down) += 1;
      }
      // Both neighbours must actually be used, or "one of the two" is vacuous.
      EXPECT_GT(up, x.size() / 10) << g.name;
      EXPECT_GT(down, x.size() / 10) << g.name;
    }
  }
}

TEST(StochasticRounding, ValuesOnTheGridAreNeverMoved) {
  // Formats whose −0 survives, so the sign of a zero must come back too.
  for (const RefGrid& g : {kE4m3, kE5m2, kE2m1, kBf16}) {
    const format::Format f = load(g);
    auto x = in_range_tensor(g, 8192, 12);
    for (float& v : x) {
      v = static_cast<float>(std::copysign(bracket(g, std::fabs(static_cast<long double>(v))).lo,
                                           static_cast<long double>(v)));
    }
    x.insert(x.end(), {0.0f, -0.0f, static_cast<float>(g.max_finite), static_cast<float>(-g.max_finite),
                       static_cast<float>(min_positive(g)), static_cast<float>(-min_positive(g))});
    for (Rounding r : kStochasticModes) {
      EXPECT_TRUE(bit_identical(quantized(f, x, stochastic_options(r, 7, 1, 3)), x)) << g.name;
    }
  }
}

struct OffGridValue {
  RefGrid grid;
  float x;
};

// Off-grid values in several binades, both signs, the subnormal range and the top binade.
const OffGridValue kMeanCases[] = {
    {kE4m3, 1.03f},  {kE4m3, -3.3f}, {kE4m3, 0.0021f}, {kE4m3, 300.5f},
    {kE5m2, 1000.7f}, {kE2m1, 2.6f},  {kE2m1, -5.1f},   {kBf16, 1.003f},
};

TEST(StochasticRounding, MeanOfManyDrawsIsUnbiased) {
  for (std::size_t c = 0; c < std::size(kMeanCases); ++c) {
    const auto& [g, x] = kMeanCases[c];
    const std::vector<float> in(kDraws, x);
    const auto out = quantized(load(g), in, stochastic_options(Rounding::stochastic, 2024, c));
    long double sum = 0.0L;
    for (float y : out) sum += y;
    const long double mean = sum / kDraws;
    const Bracket b = bracket(g, std::fabs(static_cast<long double>(x)));
    const long double p = probability_away(g, x);
    const long double sigma_of_mean = (b.hi - b.lo) * std::sqrt(p * (1.0L - p) / kDraws);
    EXPECT_LE(std::fabs(mean - x), 4.0L * sigma_of_mean)
        << g.name << " x=" << x << " mean " << static_cast<double>(mean);
  }
}

// Pearson χ² over several values: for each, the two cells (away, toward zero) contribute
// (O − np)² / (np(1 − p)), one degree of freedom per value.
template <typename ProbabilityOf>
double chi_square_of_up_frequency(std::span<const OffGridValue> cases, Rounding r, ProbabilityOf probability) {
  double chi_square = 0.0;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const auto& [g, x] = cases[c];
    const std::vector<float> in(kDraws, x);
    // Different element indices per value, so the draws are disjoint stretches of the stream.
    const auto out = quantized(load(g), in, stochastic_options(r, 99, 0, c * kDraws));
    const double p = static_cast<double>(probability(g, x));
    const double expected = p * kDraws;
    const double observed = static_cast<double>(count_away_from_zero(g, x, out));
    chi_square += (observed - expected) * (observed - expected) / (expected * (1.0 - p));
  }
  return chi_square;
}

TEST(StochasticRounding, UpFrequencyFollowsDistanceToTheNeighbours) {
  const OffGridValue cases[] = {
      {kE4m3, 1.00375f}, {kE4m3, -2.1f}, {kE4m3, 0.3f},   {kE4m3, -17.9f},
      {kE4m3, 250.0f},   {kE4m3, 405.0f}, {kE4m3, -0.0031f}, {kE2m1, 1.2f},
  };
  for (const auto& c : cases) {
    const double p = static_cast<double>(probability_away(c.grid, c.x));
    ASSERT_GT(p, 0.02) << "keep np large enough for the χ² approximation";
    ASSERT_LT(p, 0.98);
  }
  const double chi_square = chi_square_of_up_frequency(cases, Rounding::stochastic, probability_away);
  EXPECT_LT(chi_square, kChiSquare8Dof);
}

TEST(StochasticRounding, EqualModeRoundsUpHalfTheTimeWhateverTheDistance) {
  // Including values very near one neighbour, where the linear mode would almost never move.
  const OffGridValue cases[] = {
      {kE4m3, 1.001f}, {kE4m3, -1.124f}, {kE4m3, 3.3f}, {kE4m3, 0.0021f}, {kE2m1, 5.9f}, {kBf16, 1.0001f},
  };
  const double chi_square = chi_square_of_up_frequency(cases, Rounding::stochastic_equal,
                                                       [](const RefGrid&, float) { return 0.5L; });
  EXPECT_LT(chi_square, kChiSquare6Dof);
}

// The spec pins the random word of element i to philox_word(seed, stream, first_index + i), and
// the rounding to Q(fl(x·s)) / s; the element rounding itself is the format layer's encode.
TEST(StochasticRounding, DrawsThePhiloxWordOfEachElementIndex) {
  const format::Format f = load(kE4m3);
  const auto x = log_uniform_tensor(40'000, 13, -12, 10);
  const std::uint64_t seed = 0xabcdef12'3456ull, stream = 5, first = 1'000'003;
  const float scale = 3.7f;
  for (Rounding r : kStochasticModes) {
    const auto y = quantized(f, x, stochastic_options(r, seed, stream, first, scale));
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::uint32_t word = format::philox_word(seed, stream, first + i);
      const float expected = format::decode(f, format::encode(f, r, x[i] * scale, word)) / scale;
      ASSERT_EQ(std::bit_cast<std::uint32_t>(y[i]), std::bit_cast<std::uint32_t>(expected)) << "i=" << i;
    }
  }
}

TEST(StochasticRounding, BitsAreIdenticalForOneAndTwoThreads) {
  const format::Format f = load(kE4m3);
  const auto x = log_uniform_tensor(3 * 16384 + 77, 14, -12, 10);
  for (Rounding r : kStochasticModes) {
    const auto o = stochastic_options(r, 17, 2, 12345, 0.37f);
    std::vector<float> one, two;
    {
      ScopedThreadCount threads(1);
      one = quantized(f, x, o);
    }
    {
      ScopedThreadCount threads(2);
      two = quantized(f, x, o);
    }
    EXPECT_TRUE(bit_identical(one, two));
  }
}

TEST(StochasticRounding, ChunkedCallsWithFirstIndexMatchOneCall) {
  const format::Format f = load(kE5m2);
  const auto x = log_uniform_tensor(50'001, 15, -18, 15);
  const std::uint64_t base = 77;
  // Piece boundaries off every alignment: inside a Philox group, a tile and a chunk.
  const std::size_t cuts[] = {0, 1, 4, 1023, 1030, 16389, 40'000, x.size()};
  for (Rounding r : kStochasticModes) {
    const auto whole = quantized(f, x, stochastic_options(r, 5, 9, base));
    std::vector<float> pieces(x.size());
    for (std::size_t k = 0; k + 1 < std::size(cuts); ++k) {
      const std::size_t begin = cuts[k], len = cuts[k + 1] - cuts[k];
      quant::quantize(f, std::span<const float>(x).subspan(begin, len), std::span<float>(pieces).subspan(begin, len),
                      stochastic_options(r, 5, 9, base + begin));
    }
    EXPECT_TRUE(bit_identical(pieces, whole));
  }
}

std::size_t count_differences(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    n += std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i]);
  }
  return n;
}

TEST(StochasticRounding, DifferentSeedsStreamsAndIndicesGiveDifferentBits) {
  const format::Format f = load(kE4m3);
  // 1.0625 is the midpoint of 1 and 1.125: independent draws disagree half the time.
  const std::vector<float> x(4096, 1.0625f);
  const std::size_t half = x.size() / 2, quarter = x.size() / 4;
  const auto base = quantized(f, x, stochastic_options(Rounding::stochastic, 1, 0, 0));
  EXPECT_EQ(count_differences(base, quantized(f, x, stochastic_options(Rounding::stochastic, 1, 0, 0))), 0u);
  const quant::QuantizeOptions variants[] = {
      stochastic_options(Rounding::stochastic, 2, 0, 0),
      stochastic_options(Rounding::stochastic, 1 + (1ull << 32), 0, 0),  // the key's high word
      stochastic_options(Rounding::stochastic, 1, 1, 0),
      stochastic_options(Rounding::stochastic, 1, 1ull << 32, 0),        // the counter's top word
      stochastic_options(Rounding::stochastic, 1, 0, 4),                 // shifted by one group
  };
  for (const auto& o : variants) {
    const std::size_t differ = count_differences(base, quantized(f, x, o));
    EXPECT_GT(differ, quarter) << "seed " << o.seed << " stream " << o.stream << " first " << o.first_index;
    EXPECT_LT(differ, half + quarter);
  }
}

// Above max finite the rounding is still on the extended grid: 460 lies between 448 and 480, so
// with probability 12/32 it rounds to 480, which overflows (saturating back to 448).
TEST(StochasticRounding, RoundingBeyondMaxFiniteCountsAsOverflowAndSaturates) {
  const format::Format f = load(kE4m3);
  const std::vector<float> x(kDraws, 460.0f);
  std::vector<float> y(kDraws);
  const auto stats = quant::quantize(f, x, y, stochastic_options(Rounding::stochastic, 8));
  for (float v : y) ASSERT_EQ(v, 448.0f);
  const double p = 12.0 / 32.0, sigma = std::sqrt(p * (1 - p) / kDraws);
  EXPECT_NEAR(static_cast<double>(stats.overflow) / kDraws, p, 4 * sigma);
}

TEST(StochasticRounding, RoundingBeyondMaxFiniteGivesInfUnderOverflowInf) {
  const format::Format f = load(kE5m2Inf);
  const std::vector<float> x(kDraws, -60000.0f);  // between −57344 and −65536
  std::vector<float> y(kDraws);
  const auto stats = quant::quantize(f, x, y, stochastic_options(Rounding::stochastic, 8));
  std::size_t infinities = 0;
  for (float v : y) {
    ASSERT_TRUE(v == -57344.0f || v == -std::numeric_limits<float>::infinity()) << v;
    infinities += std::isinf(v);
  }
  EXPECT_EQ(stats.overflow, infinities);
  const double p = (60000.0 - 57344.0) / 8192.0, sigma = std::sqrt(p * (1 - p) / kDraws);
  EXPECT_NEAR(static_cast<double>(infinities) / kDraws, p, 4 * sigma);
}

}  // namespace
}  // namespace altgrad::quant_test
