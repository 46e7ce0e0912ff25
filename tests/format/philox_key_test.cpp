// The per-purpose Philox keys of format/philox_key.hpp: for every seed the purposes get distinct
// keys. The proof is that the key is a bijection of seed XOR tag(purpose) with distinct tags; the
// bijection is shown here by an inverse written from the definition (each xor-shift and each odd
// multiplier undone), not by sampling for collisions.
#include "format/philox_key.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>

namespace altgrad::format_test {
namespace {

using format::RandomPurpose;

constexpr std::array kPurposes = {RandomPurpose::initialization, RandomPurpose::batch_sampling,
                                  RandomPurpose::stochastic_rounding, RandomPurpose::grid_walk_rounding,
                                  RandomPurpose::text_sampling, RandomPurpose::hessian_probe,
                                  RandomPurpose::adam_state_rounding};

// The inverse of a mod 2^64 for odd a, by Newton's iteration x ← x(2 − a·x): each step doubles the
// number of correct low bits, starting from 3 (a·a ≡ 1 mod 8 for odd a).
std::uint64_t inverse_mod_2_64(std::uint64_t a) {
  std::uint64_t x = a;
  for (int i = 0; i < 5; ++i) x *= 2 - a * x;
  return x;
}

// Undoes z ^= z >> shift: the top `shift` bits are unchanged, and each pass recovers `shift` more.
std::uint64_t undo_xorshift(std::uint64_t z, int shift) {
  std::uint64_t x = z;
  for (int recovered = shift; recovered < 64; recovered += shift) x = z ^ (x >> shift);
  return x;
}

std::uint64_t unmix64(std::uint64_t z) {
  z = undo_xorshift(z, 31);
  z = undo_xorshift(z * inverse_mod_2_64(0x94D0'49BB'1331'11EBu), 27);
  return undo_xorshift(z * inverse_mod_2_64(0xBF58'476D'1CE4'E5B9u), 30);
}

std::uint64_t splitmix_step(std::uint64_t& state) { return format::mix64(state += 0x9E37'79B9'7F4A'7C15u); }

TEST(PhiloxKey, MixIsInvertibleSoDistinctInputsGiveDistinctKeys) {
  std::uint64_t state = 12345;
  for (int i = 0; i < 100'000; ++i) {
    const std::uint64_t x = splitmix_step(state);
    ASSERT_EQ(unmix64(format::mix64(x)), x) << x;
  }
  for (const std::uint64_t x : {std::uint64_t{0}, std::uint64_t{1}, ~std::uint64_t{0}, std::uint64_t{1} << 63}) {
    EXPECT_EQ(unmix64(format::mix64(x)), x) << x;
  }
}

// key(seed, p) = mix(seed ^ tag(p)); unmixing recovers seed ^ tag(p), so two purposes share a key
// under one seed only if their tags are equal. They are pairwise distinct, hence never.
TEST(PhiloxKey, EveryPurposeOfOneSeedHasItsOwnKey) {
  std::set<std::uint64_t> tags;
  for (const RandomPurpose p : kPurposes) {
    tags.insert(format::purpose_tag(p));
    for (const std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{1337}, std::uint64_t{INT64_MAX}, ~std::uint64_t{0}}) {
      EXPECT_EQ(unmix64(format::philox_key(seed, p)) ^ seed, format::purpose_tag(p));
    }
  }
  EXPECT_EQ(tags.size(), kPurposes.size());
}

// Across runs too: seeds 0 … 9999, every purpose, 50,000 keys, no two alike (so runs with nearby
// seeds compared side by side never reuse each other's words under another purpose).
TEST(PhiloxKey, NearbySeedsShareNoKeyAcrossPurposes) {
  std::set<std::uint64_t> keys;
  for (std::uint64_t seed = 0; seed < 10'000; ++seed) {
    for (const RandomPurpose p : kPurposes) keys.insert(format::philox_key(seed, p));
  }
  EXPECT_EQ(keys.size(), 10'000 * kPurposes.size());
}

// The key is not the seed: a run no longer draws the raw-seed words every purpose used to share.
TEST(PhiloxKey, NoPurposeIsKeyedByTheBareSeed) {
  for (const RandomPurpose p : kPurposes) {
    for (std::uint64_t seed = 0; seed < 1000; ++seed) ASSERT_NE(format::philox_key(seed, p), seed);
  }
}

}  // namespace
}  // namespace altgrad::format_test
