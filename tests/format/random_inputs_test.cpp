// Random float32 inputs against a brute-force search over the reference value list, for every
// deterministic rounding mode, codes, result bits and RoundFlags. Two samples per format: random bit
// patterns over all finite floats (mostly far outside a small format's range: saturation, underflow)
// and log-uniform magnitudes around the format's own range (the interior of the grid).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "format/codec.hpp"
#include "mismatch_log.hpp"
#include "reference_grid.hpp"
#include "reference_rounding.hpp"
#include "rounding_check.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

using format_ref::Bracket;
using format_ref::ReferenceGrid;

constexpr std::size_t kSamplesPerKind = kRandomInputsPerFormat / 2;
// Linear scans stay cheap up to this many grid points; the 16-bit formats use binary search.
constexpr std::size_t kScanLimit = 1024;

// A fixed seed per format, so a failure reproduces (the report also prints the input's bits).
std::uint64_t seed_for(std::string_view name) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

float random_finite_float(std::mt19937_64& rng) {
  for (;;) {
    const auto bits = static_cast<std::uint32_t>(rng());
    if ((bits & 0x7F80'0000u) != 0x7F80'0000u) return float_of(bits);
  }
}

// |x| = (1 + f) * 2^k with k uniform over the format's binades and a few beyond each end.
float random_log_uniform(std::mt19937_64& rng, int min_exp, int max_exp, bool allow_negative) {
  std::uniform_int_distribution<int> exponent(min_exp, max_exp);
  const auto fraction = static_cast<float>(rng() & 0x7F'FFFFu) / 8388608.0f;
  const float magnitude = std::ldexp(1.0f + fraction, exponent(rng));
  const bool negative = allow_negative ? (rng() & 1u) != 0 : (rng() & 7u) == 0;  // fnu: 1 in 8 negative
  return negative ? -magnitude : magnitude;
}

class RandomInputsTest : public ::testing::TestWithParam<FormatCase> {
 protected:
  Bracket bracket(float x) const {
    return grid.rounding_points().size() <= kScanLimit ? format_ref::bracket_by_scan(grid, x)
                                                       : format_ref::bracket_by_search(grid, x);
  }

  void check_all_modes(float x, MismatchLog& log) const {
    const Bracket b = bracket(x);
    for (format::Rounding mode : modes) {
      check_rounding(format, GetParam().name, mode, x, format_ref::reference_round(grid, mode, x, b), log);
    }
  }

  const ReferenceGrid grid{GetParam().spec};
  const format::Format format = format::make_format(GetParam().spec);
  const std::vector<format::Rounding> modes = deterministic_roundings();
  std::mt19937_64 rng{seed_for(GetParam().name)};
};

TEST_P(RandomInputsTest, RandomFiniteBitPatterns) {
  MismatchLog log(std::string(GetParam().name) + " random bit patterns");
  for (std::size_t i = 0; i < kSamplesPerKind; ++i) check_all_modes(random_finite_float(rng), log);
}

TEST_P(RandomInputsTest, LogUniformMagnitudesAroundTheRange) {
  MismatchLog log(std::string(GetParam().name) + " log-uniform inputs");
  const int min_exp = std::max(std::ilogb(static_cast<double>(grid.min_positive())) - 4, -149);
  const int max_exp = std::min(std::ilogb(static_cast<double>(grid.beyond_max())) + 2, 127);
  for (std::size_t i = 0; i < kSamplesPerKind; ++i) {
    check_all_modes(random_log_uniform(rng, min_exp, max_exp, grid.is_signed()), log);
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, RandomInputsTest, ::testing::ValuesIn(all_format_cases()),
                         FormatCaseName());

}  // namespace
}  // namespace altgrad::format_test
