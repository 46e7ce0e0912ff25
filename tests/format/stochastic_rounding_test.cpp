// The stochastic modes. Their result depends on the random word, so they are checked two ways:
//   - statistically: over random words the result is always one of the reference's two neighbours
//     (round-down and round-up of x), and it goes up with frequency (x - lo)/(hi - lo) for
//     `stochastic` and 1/2 for `stochastic-equal`, within 5 standard deviations;
//   - exactly: "resolved to 2^-32" means k of the 2^32 words round up with |k - p * 2^32| < 1
//     (k = 2^31 exactly for `stochastic-equal`). Counting k over all words is too slow, so the test
//     relies on the words that round up forming one run at the bottom or the top of the word range
//     (checked on 257 spread words first) and binary-searches the run's end.
// Both paths are covered: encode() (round_to_grid) and the quantizer's round_stochastic_simple().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string_view>
#include <vector>

#include "format/codec.hpp"
#include "mismatch_log.hpp"
#include "reference_grid.hpp"
#include "reference_rounding.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

using format::Rounding;
using format_ref::ReferenceGrid;

constexpr int kDraws = 4096;
constexpr long double kTwo32 = 4294967296.0L;

// x strictly inside a gap [lo, hi] of the grid, the fraction p of the gap below it, and the float32
// bits of the reference's round-down and round-up of x.
struct GapInput {
  float x;
  long double p_up;
  std::uint32_t down_bits, up_bits;
};

// One rounding of x with a random word, as float32 bits.
using StochasticRound = std::function<std::uint32_t(float x, std::uint32_t word)>;

class StochasticRoundingTest : public ::testing::TestWithParam<FormatCase> {
 protected:
  // Up to ~`gaps` gaps spread over the grid, three positions in each (random fractions, so p uses
  // the full float32 resolution). Gaps whose two outcomes are the same value (saturation past max
  // finite, fnu's clamp below 2^-bias) are left out: there is nothing to observe.
  std::vector<GapInput> gap_inputs(std::size_t gaps) {
    std::vector<GapInput> inputs;
    const auto& points = grid.rounding_points();
    const std::size_t stride = std::max<std::size_t>(1, points.size() / gaps);
    std::uniform_real_distribution<double> fraction(0.0, 1.0);
    for (std::size_t i = 0; i + 1 < points.size(); i += stride) {
      const long double lo = points[i].value, hi = points[i + 1].value;
      for (int k = 0; k < 3; ++k) {
        const auto x = static_cast<float>(lo + fraction(rng) * (hi - lo));
        if (!std::isfinite(x) || x <= lo || x >= hi || (x < 0 && !grid.is_signed())) continue;
        const auto down =
            format_ref::expected_float_bits(format_ref::reference_round(grid, Rounding::toward_negative, x));
        const auto up =
            format_ref::expected_float_bits(format_ref::reference_round(grid, Rounding::toward_positive, x));
        if (down == up) continue;
        inputs.push_back(
            {x, (static_cast<long double>(x) - lo) / (hi - lo), down, up});  // exact: hi - lo is 2^k
      }
    }
    return inputs;
  }

  StochasticRound general(Rounding mode) const {
    return [this, mode](float x, std::uint32_t word) {
      format::RoundFlags flags;
      return format::round_bits(format, mode, bits_of(x), word, flags);
    };
  }

  StochasticRound simple() const {
    return [this](float x, std::uint32_t word) {
      return format::round_stochastic_simple(format, bits_of(x), word).bits;
    };
  }

  // Over kDraws random words: every result is a neighbour, and the ups are about p * kDraws.
  void expect_frequency(const StochasticRound& round, const GapInput& in, long double p, MismatchLog& log) {
    int ups = 0;
    for (int i = 0; i < kDraws; ++i) {
      const auto word = static_cast<std::uint32_t>(rng());
      const std::uint32_t bits = round(in.x, word);
      ups += bits == in.up_bits ? 1 : 0;
      if (bits != in.up_bits && bits != in.down_bits) {
        log.add("input " + describe(in.x) + " word " + hex(word) + ": " + describe(float_of(bits)) +
                " is neither " + describe(float_of(in.down_bits)) + " nor " + describe(float_of(in.up_bits)));
      }
    }
    const long double mean = p * kDraws, sigma = std::sqrt(kDraws * p * (1 - p));
    if (std::fabs(ups - mean) > 5 * sigma + 1) {
      log.add("input " + describe(in.x) + ": " + std::to_string(ups) + " ups of " + std::to_string(kDraws) +
              ", expected about " + describe(mean));
    }
  }

  // The number of words that round up, found by binary search over the one run they form.
  void expect_exact_count(const StochasticRound& round, const GapInput& in, long double p, MismatchLog& log) {
    const auto is_up = [&](std::uint64_t word) {
      return round(in.x, static_cast<std::uint32_t>(word)) == in.up_bits;
    };
    const std::uint64_t last = 0xFFFF'FFFFu;
    int switches = 0;
    bool previous = is_up(0);
    for (std::uint64_t i = 1; i <= 256; ++i) {
      const bool current = is_up(std::min(i << 24, last));
      switches += current != previous ? 1 : 0;
      previous = current;
    }
    if (switches > 1) {
      log.add("input " + describe(in.x) + ": the words that round up are not one run");
      return;
    }
    const bool bottom_run = is_up(0);
    // First word whose outcome differs from word 0's (2^32 when none does).
    std::uint64_t lo = 0, hi = last + 1;
    while (hi - lo > 1) {
      const std::uint64_t mid = (lo + hi) / 2;
      (is_up(mid) == bottom_run ? lo : hi) = mid;
    }
    const long double ups =
        bottom_run ? static_cast<long double>(hi) : static_cast<long double>(last + 1 - hi);
    if (std::fabs(ups - p * kTwo32) >= 1) {
      log.add("input " + describe(in.x) + ": " + describe(ups) +
              " of 2^32 words round up, expected p * 2^32 = " + describe(p * kTwo32));
    }
  }

  const ReferenceGrid grid{GetParam().spec};
  const format::Format format = format::make_format(GetParam().spec);
  std::mt19937 rng{777};
};

TEST_P(StochasticRoundingTest, RoundsUpWithFrequencyProportionalToTheDistance) {
  MismatchLog log(std::string(GetParam().name) + " stochastic");
  for (const GapInput& in : gap_inputs(24)) expect_frequency(general(Rounding::stochastic), in, in.p_up, log);
}

TEST_P(StochasticRoundingTest, EqualModeRoundsUpHalfTheTime) {
  MismatchLog log(std::string(GetParam().name) + " stochastic-equal");
  for (const GapInput& in : gap_inputs(24))
    expect_frequency(general(Rounding::stochastic_equal), in, 0.5L, log);
}

TEST_P(StochasticRoundingTest, ProbabilityIsResolvedTo2ToTheMinus32) {
  MismatchLog log(std::string(GetParam().name) + " stochastic, exact count");
  for (const GapInput& in : gap_inputs(128))
    expect_exact_count(general(Rounding::stochastic), in, in.p_up, log);
}

TEST_P(StochasticRoundingTest, EqualModeRoundsUpForExactlyHalfTheWords) {
  MismatchLog log(std::string(GetParam().name) + " stochastic-equal, exact count");
  for (const GapInput& in : gap_inputs(64))
    expect_exact_count(general(Rounding::stochastic_equal), in, 0.5L, log);
}

// round_stochastic_simple() where it applies (signed, zero, subnormals, min normal a normal float32).
class StochasticSimplePathTest : public StochasticRoundingTest {};

TEST_P(StochasticSimplePathTest, RoundsUpWithFrequencyProportionalToTheDistance) {
  MismatchLog log(std::string(GetParam().name) + " round_stochastic_simple");
  for (const GapInput& in : gap_inputs(24)) expect_frequency(simple(), in, in.p_up, log);
}

TEST_P(StochasticSimplePathTest, ProbabilityIsResolvedTo2ToTheMinus32) {
  MismatchLog log(std::string(GetParam().name) + " round_stochastic_simple, exact count");
  for (const GapInput& in : gap_inputs(128)) expect_exact_count(simple(), in, in.p_up, log);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, StochasticRoundingTest, ::testing::ValuesIn(all_format_cases()),
                         FormatCaseName());
INSTANTIATE_TEST_SUITE_P(SimpleGridFormats, StochasticSimplePathTest,
                         ::testing::ValuesIn(format_cases_where(simple_grid_applies)), FormatCaseName());

}  // namespace
}  // namespace altgrad::format_test
