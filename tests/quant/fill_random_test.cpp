// fill_random, the quantizer's bulk form of format::philox_word (whose known answers and layout
// tests/format/philox_test.cpp checks).
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "format/philox.hpp"
#include "quant/quantize.hpp"

namespace altgrad {
namespace {

// fill_random must hand element i the word of first_index + i for any alignment of first_index
// within a group of four and any length, and must not write past the span.
TEST(FillRandom, MatchesPhiloxWordForUnalignedStartsAndOddLengths) {
  const std::uint64_t seed = 0x5eed'0000'0000'0001ull, stream = 3;
  // Group numbers (index / 4) that cross 2^32 inside one batch carry into the counter's high word.
  const std::uint64_t starts[] = {0, 1, 2, 3, 5, 6, 7, (1ull << 32) - 3, (1ull << 34) - 37, (1ull << 40) + 1};
  const std::size_t lengths[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 127, 128, 129, 1023, 1025};
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
