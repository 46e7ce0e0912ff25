// Philox4x32-10 against the published Random123 known answers, and the word layout the spec fixes
// for stochastic rounding: element `index` of (seed, stream) reads counter (index/4, stream), key
// seed, word index mod 4.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "format/philox.hpp"
#include "quant/quantize.hpp"

namespace altgrad {
namespace {

using format::PhiloxCounter;
using format::PhiloxKey;

// Random123 kat_vectors, philox4x32_10 rows.
TEST(Philox4x32_10, MatchesKnownAnswerForZeroCounterAndKey) {
  const PhiloxCounter expected = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
  EXPECT_EQ(format::philox4x32_10({0, 0, 0, 0}, {0, 0}), expected);
}

TEST(Philox4x32_10, MatchesKnownAnswerForAllOnesCounterAndKey) {
  const PhiloxCounter expected = {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu};
  EXPECT_EQ(format::philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                                  {0xffffffffu, 0xffffffffu}),
            expected);
}

TEST(Philox4x32_10, MatchesKnownAnswerForPiDigits) {
  const PhiloxCounter expected = {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u};
  EXPECT_EQ(format::philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                                  {0xa4093822u, 0x299f31d0u}),
            expected);
}

std::uint32_t low(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t high(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

// 64-bit seeds, streams and indices whose high halves are nonzero, so a layout that dropped or
// swapped a half would be caught.
TEST(PhiloxWord, ReadsCounterIndexOverFourAndStreamUnderKeySeed) {
  const std::uint64_t seeds[] = {0, 1, 0x0123'4567'89ab'cdefull};
  const std::uint64_t streams[] = {0, 7, 0xfedc'ba98'7654'3210ull};
  const std::uint64_t indices[] = {0, 1, 2, 3, 4, 5, 1023, (1ull << 32) + 6, 0xffff'ffff'ffff'fffeull};
  for (std::uint64_t seed : seeds) {
    for (std::uint64_t stream : streams) {
      for (std::uint64_t index : indices) {
        const std::uint64_t group = index / 4;
        const PhiloxCounter block = format::philox4x32_10({low(group), high(group), low(stream), high(stream)},
                                                          {low(seed), high(seed)});
        EXPECT_EQ(format::philox_word(seed, stream, index), block[index % 4])
            << "seed " << seed << " stream " << stream << " index " << index;
      }
    }
  }
}

// fill_random must hand element i the word of first_index + i for any alignment of first_index
// within a group of four and any length, and must not write past the span.
TEST(FillRandom, MatchesPhiloxWordForUnalignedStartsAndOddLengths) {
  const std::uint64_t seed = 0x5eed'0000'0000'0001ull, stream = 3;
  const std::uint64_t starts[] = {0, 1, 2, 3, 5, 6, 7, (1ull << 32) - 3, (1ull << 40) + 1};
  const std::size_t lengths[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 1023, 1025};
  constexpr std::uint32_t kGuard = 0xdeadbeefu;
  for (std::uint64_t first : starts) {
    for (std::size_t n : lengths) {
      std::vector<std::uint32_t> words(n + 4, kGuard);
      quant::fill_random(seed, stream, first, std::span<std::uint32_t>(words.data(), n));
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(words[i], format::philox_word(seed, stream, first + i)) << "first " << first << " i " << i;
      }
      for (std::size_t i = n; i < n + 4; ++i) {
        ASSERT_EQ(words[i], kGuard) << "wrote past the span: first " << first << " n " << n;
      }
    }
  }
}

}  // namespace
}  // namespace altgrad
