#pragma once
// The stochastic-rounding words of four consecutive elements, on both devices: element i of a call
// draws format::philox_word(seed, stream, first_index + i), as quant/random_words.hpp fills them
// on the CPU. One Philox evaluation yields the words of the four indices of one counter group
// (index / 4); four consecutive indices that start inside a group straddle two groups, and take
// both evaluations.
#include <cstdint>

#include "format/host_device.hpp"
#include "format/philox.hpp"
#include "quant/random_bits.hpp"

namespace altgrad::quant::cuda {

// The four words as drawn.
ALTGRAD_HD inline void draw_quad(std::uint64_t seed, std::uint64_t stream, std::uint64_t index,
                                 std::uint32_t (&words)[4]) {
  const unsigned skip = static_cast<unsigned>(index & 3);
  const format::PhiloxCounter first = format::philox_block(seed, stream, index >> 2);
  if (skip == 0) {
    for (int j = 0; j < 4; ++j) words[j] = first[j];
    return;
  }
  // The eight words of the two groups shifted down by `skip`, with constant indices only (a
  // register-held array indexed by a runtime value would go to the GPU's local memory).
  format::PhiloxCounter second = format::philox_block(seed, stream, (index >> 2) + 1);
  for (int j = 0; j < 4; ++j) words[j] = first[j];
  for (unsigned s = 0; s < skip; ++s) {
    words[0] = words[1], words[1] = words[2], words[2] = words[3], words[3] = second[0];
    second[0] = second[1], second[1] = second[2], second[2] = second[3];
  }
}

// words[j] = philox_word(seed, stream, index + j) | mask for j < 4 (mask: quant/random_bits.hpp).
ALTGRAD_HD inline void random_quad(std::uint64_t seed, std::uint64_t stream, std::uint64_t index,
                                   std::uint32_t (&words)[4], std::uint32_t mask = 0) {
  draw_quad(seed, stream, index, words);
  for (int j = 0; j < 4; ++j) words[j] |= mask;
}

}  // namespace altgrad::quant::cuda
