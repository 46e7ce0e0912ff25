// Low-precision state storage (optim/quantized_state.hpp, optim/state_groups.hpp): the groups a
// tensor is cut into, the per-group scale, and every written code against a brute-force search over
// all codes of the format, for every named format family.
#include "optim/quantized_state.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "format/philox.hpp"
#include "optim/nearest_code_reference.hpp"

namespace altgrad::optim {
namespace {

format::Format state_format(const std::string& name) { return format::make_format(format::parse_format(name)); }

// Group g's [begin, end), written out from the definition: each range cut from its own start.
std::vector<std::pair<std::size_t, std::size_t>> expected_groups(const std::vector<ParameterRange>& ranges, std::size_t group) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const ParameterRange& r : ranges) {
    std::size_t b = r.offset;
    while (b < r.offset + r.size) {
      const std::size_t e = std::min(b + group, r.offset + r.size);
      out.emplace_back(b, e);
      b = e;
    }
  }
  return out;
}

TEST(StateGroups, CutsEachRangeFromItsOwnStart) {
  const std::vector<ParameterRange> ranges = {{0, 5, true}, {5, 300, false}, {305, 1, true}, {306, 8, true}};
  const StateGroups groups(ranges, 4);
  const auto expected = expected_groups(ranges, 4);
  ASSERT_EQ(groups.count(), expected.size());  // 2 + 75 + 1 + 2
  EXPECT_EQ(groups.count(), 80u);
  for (std::size_t g = 0; g < expected.size(); ++g) {
    EXPECT_EQ(groups.begin(g), expected[g].first) << g;
    EXPECT_EQ(groups.end(g), expected[g].second) << g;
  }
  EXPECT_EQ(groups.first_of_range(0), 0u);
  EXPECT_EQ(groups.first_of_range(1), 2u);
  EXPECT_EQ(groups.first_of_range(2), 77u);
  EXPECT_EQ(groups.first_of_range(3), 78u);
  EXPECT_EQ(groups.first_of_range(4), 80u);
  EXPECT_THROW(StateGroups(ranges, 0), std::invalid_argument);
}

// Values spanning many binades per group, zeros among them, one all-zero group, signs as the
// format allows.
std::vector<float> state_values(std::size_t n, bool with_sign, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> binade(-30, 10);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = normal(gen) * std::ldexp(1.0f, binade(gen));
    x[i] = with_sign ? v : std::fabs(v);
    if (i % 17 == 3) x[i] = 0.0f;
  }
  std::fill(x.begin() + 300, x.begin() + 340, 0.0f);  // one whole group of zeros (group 40 below)
  return x;
}

// Every code written by the nearest-even path is the brute-force nearest value of clamp(x / d),
// d = max(amax, 1e-12) / max finite (FP32, at least 2^-126), per group.
void expect_nearest_codes(const std::string& name, bool with_sign) {
  SCOPED_TRACE(name);
  const format::Format f = state_format(name);
  const std::vector<ParameterRange> ranges = {{0, 260, true}, {260, 140, false}, {400, 37, true}};
  const std::size_t n = 437, group = 40;
  QuantizedState state("exp_avg", f, name, StateGroups(ranges, group), n);
  const std::vector<float> x = state_values(n, with_sign, 11);
  const auto expected = expected_groups(ranges, group);
  ASSERT_EQ(state.groups().count(), expected.size());
  for (std::size_t g = 0; g < expected.size(); ++g) state.encode_group(g, x.data() + expected[g].first, format::Rounding::nearest_even, 0, 0);

  std::vector<float> decoded(group);
  for (std::size_t g = 0; g < expected.size(); ++g) {
    const auto [begin, end] = expected[g];
    float amax = 0.0f;
    for (std::size_t i = begin; i < end; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float d = std::max(std::max(amax, 1e-12f) / f.max_finite(), std::numeric_limits<float>::min());
    ASSERT_EQ(state.scales()[g], d) << "group " << g;
    state.decode_group(g, decoded.data());
    for (std::size_t i = begin; i < end; ++i) {
      const float y = x[i] / d;  // the definition divides in FP32
      const optim_test::NearestCode want = optim_test::brute_force_nearest(f, y);
      const float got = format::decode(f, state.code(i));
      ASSERT_EQ(static_cast<double>(got), want.value) << "element " << i << " x " << x[i] << " y " << y;
      ASSERT_EQ(decoded[i - begin], got * d) << "element " << i;
    }
  }
}

TEST(QuantizedState, NearestCodesMatchABruteForceSearchOverEveryCode) {
  for (const char* name : {"e4m3", "e5m2", "e3m4", "e2m5", "e4m3fnuz", "e5m2fnuz", "e2m3", "e3m2", "e2m1", "e7m0", "fp16",
                           "bf16", "e5m2,overflow=inf", "e4m3,subnormals=off", "e3m3,bias=2"}) {
    expect_nearest_codes(name, true);
  }
  expect_nearest_codes("e8m0fnu", false);  // unsigned: exp_avg_sq only
  expect_nearest_codes("e4m3", false);
}

TEST(QuantizedState, TheLargestMagnitudeLandsOnMaxFiniteAndZerosStayZero) {
  const format::Format f = state_format("e4m3");
  QuantizedState state("exp_avg", f, "e4m3", StateGroups(std::vector<ParameterRange>{{0, 4, true}}, 4), 4);
  const float x[4] = {0.0f, -3.0f, 1e-3f, 2.5f};
  state.encode_group(0, x, format::Rounding::nearest_even, 0, 0);
  EXPECT_EQ(state.scales()[0], 3.0f / 448.0f);
  EXPECT_EQ(format::decode(f, state.code(1)), -448.0f);
  EXPECT_EQ(format::decode(f, state.code(0)), 0.0f);
  const float zeros[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  state.encode_group(0, zeros, format::Rounding::nearest_even, 0, 0);
  EXPECT_EQ(state.scales()[0], 1e-12f / 448.0f);  // torchao's floor
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(format::decode(f, state.code(i)), 0.0f);
}

// Stochastic rounding: element i goes up exactly when philox_word(key, stream, i) is below the
// fraction of the grid step, and the mean over many streams is the value itself.
TEST(QuantizedState, StochasticWritesFollowTheDocumentedDrawAndAreUnbiased) {
  const format::Format f = state_format("e4m3");
  const std::size_t n = 64;
  QuantizedState state("exp_avg", f, "e4m3", StateGroups(std::vector<ParameterRange>{{0, n, true}}, n), n);
  std::vector<float> x(n, 1.3f);
  x[0] = 448.0f;  // d = 1: 1.3 lies between the E4M3 values 1.25 and 1.375
  const double fraction = (1.3f - 1.25) / 0.125;
  const std::uint64_t key = 0x1234'5678'9ABC'DEF0u;
  double sum = 0.0;
  std::size_t count = 0;
  for (std::uint64_t stream = 0; stream < 400; ++stream) {
    state.encode_group(0, x.data(), format::Rounding::stochastic, key, stream);
    ASSERT_EQ(state.scales()[0], 1.0f);
    for (std::size_t i = 1; i < n; ++i) {
      const float v = format::decode(f, state.code(i));
      const double threshold = fraction * 4294967296.0;
      const double word = format::philox_word(key, stream, i);
      if (std::fabs(word - threshold) > 1e-5 * 4294967296.0) {
        ASSERT_EQ(v, word < threshold ? 1.375f : 1.25f) << "stream " << stream << " element " << i;
      }
      sum += v;
      ++count;
    }
  }
  // σ of one draw is 0.125·sqrt(p(1 − p)); 5σ of the mean of `count` draws.
  const double sigma = 0.125 * std::sqrt(fraction * (1.0 - fraction) / static_cast<double>(count));
  EXPECT_NEAR(sum / static_cast<double>(count), static_cast<double>(1.3f), 5.0 * sigma);
}

TEST(QuantizedState, RestoreRefusesWhatTheFormatCannotHoldAndChangesNothing) {
  const format::Format f = state_format("e2m1");
  const std::vector<ParameterRange> ranges = {{0, 6, true}};
  QuantizedState state("exp_avg", f, "e2m1", StateGroups(ranges, 4), 6);
  const float x[4] = {1.0f, 2.0f, -3.0f, 0.5f};
  state.encode_group(0, x, format::Rounding::nearest_even, 0, 0);
  const std::vector<std::uint8_t> before(state.code_data().begin(), state.code_data().end());
  const std::vector<float> scales = {1.0f, 2.0f};
  EXPECT_THROW(state.restore(std::vector<std::uint8_t>(5), scales), std::invalid_argument);
  EXPECT_THROW(state.restore(std::vector<std::uint8_t>(6), std::vector<float>{1.0f}), std::invalid_argument);
  EXPECT_THROW(state.restore(std::vector<std::uint8_t>(6), std::vector<float>{1.0f, 0.0f}), std::invalid_argument);
  EXPECT_THROW(state.restore(std::vector<std::uint8_t>(6), std::vector<float>{1.0f, std::nanf("")}), std::invalid_argument);
  std::vector<std::uint8_t> wide(6, 1);
  wide[4] = 16;  // e2m1 has 16 codes
  EXPECT_THROW(state.restore(wide, scales), std::invalid_argument);
  EXPECT_EQ(std::vector<std::uint8_t>(state.code_data().begin(), state.code_data().end()), before);
  state.restore(std::vector<std::uint8_t>(6, 2), scales);
  EXPECT_EQ(state.code(5), 2u);
  EXPECT_EQ(state.scales()[1], 2.0f);
}

TEST(QuantizedState, SixteenBitFormatsKeepTwoBytesPerCode) {
  const format::Format f = state_format("bf16");
  QuantizedState state("exp_avg_sq", f, "bf16", StateGroups(std::vector<ParameterRange>{{0, 300, true}}, 128), 300);
  EXPECT_EQ(state.code_bytes(), 2u);
  EXPECT_EQ(state.bytes(), 600u + 3u * 4u);
  const format::Format e4m3 = state_format("e4m3");
  QuantizedState small("exp_avg", e4m3, "e4m3", StateGroups(std::vector<ParameterRange>{{0, 300, true}}, 128), 300);
  EXPECT_EQ(small.bytes(), 300u + 3u * 4u);
}

}  // namespace
}  // namespace altgrad::optim
