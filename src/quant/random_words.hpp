#pragma once
// The random words of stochastic rounding in bulk: element i of a call draws
// format::philox_word(seed, stream, first_index + i), whatever the thread or the call it falls in.
#include <cstdint>
#include <span>

#include "quant/random_bits.hpp"

namespace altgrad::quant {

// Fills words[i] with the Philox word of element first_index + i, keeping `bits` random bits of
// each (random_bits.hpp).
void fill_random(std::uint64_t seed, std::uint64_t stream, std::uint64_t first_index,
                 std::span<std::uint32_t> words, int bits = kMaxRandomBits);

}  // namespace altgrad::quant
