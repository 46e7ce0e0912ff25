// Philox4x32-10 against the known-answer vectors published with Random123 (DEShawResearch/random123,
// tests/kat_vectors, "philox4x32 10" lines), and the element-to-word mapping of docs/formats.md:
// element i of stream s under seed k reads word i mod 4 of Philox at counter (i / 4, s), key k.
#include <gtest/gtest.h>

#include "format/philox.hpp"

namespace altgrad::format_test {
namespace {

using format::PhiloxCounter;
using format::PhiloxKey;

struct KnownAnswer {
  PhiloxCounter counter;
  PhiloxKey key;
  PhiloxCounter output;
};

const KnownAnswer kRandom123Vectors[] = {
    {{0u, 0u, 0u, 0u}, {0u, 0u}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
    {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
     {0xffffffffu, 0xffffffffu},
     {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
    {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
     {0xa4093822u, 0x299f31d0u},
     {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
};

TEST(Philox, MatchesTheRandom123KnownAnswers) {
  for (const KnownAnswer& kat : kRandom123Vectors) {
    EXPECT_EQ(format::philox4x32_10(kat.counter, kat.key), kat.output);
  }
}

// The counter's low 64 bits are the element group i / 4, the high 64 bits the stream; the key is
// the seed. Each known answer, laid out that way, must come back from philox_block.
TEST(Philox, BlocksFollowTheDocumentedCounterLayout) {
  const auto u64 = [](std::uint32_t hi, std::uint32_t lo) { return (std::uint64_t{hi} << 32) | lo; };
  for (const KnownAnswer& kat : kRandom123Vectors) {
    const std::uint64_t group = u64(kat.counter[1], kat.counter[0]);
    const std::uint64_t stream = u64(kat.counter[3], kat.counter[2]);
    const std::uint64_t seed = u64(kat.key[1], kat.key[0]);
    EXPECT_EQ(format::philox_block(seed, stream, group), kat.output);
  }
}

// Element i reads word i mod 4 of block i / 4: elements 0..3 of the zero seed and stream are the
// first known answer, and neighbouring groups share nothing.
TEST(Philox, ElementWordsAreTheWordsOfTheirGroup) {
  for (std::uint64_t i = 0; i < 4; ++i)
    EXPECT_EQ(format::philox_word(0, 0, i), kRandom123Vectors[0].output[i]) << i;
  const std::uint64_t seed = 0x0123'4567'89AB'CDEFull, stream = 42;
  for (std::uint64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(format::philox_word(seed, stream, i), format::philox_block(seed, stream, i / 4)[i % 4]) << i;
  }
  EXPECT_NE(format::philox_word(seed, stream, 4), format::philox_word(seed, stream, 0));
  EXPECT_NE(format::philox_word(seed, stream + 1, 0), format::philox_word(seed, stream, 0));
}

}  // namespace
}  // namespace altgrad::format_test
