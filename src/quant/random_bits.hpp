#pragma once
// Stochastic rounding with fewer random bits than a Philox word's 32 (a point's `sr_bits`,
// docs/quantization.md). Rounding up happens when the element's word is below its fraction of a
// step, as a 32-bit fixed-point number (format/codec.hpp). A word that keeps its top `bits` bits r
// and has the others set rounds up when r < floor(fraction · 2^bits), with probability
// floor(2^bits · fraction) / 2^bits: what hardware that adds `bits` random bits below the kept
// mantissa and truncates does (Transformer Engine's FP4 stochastic rounding uses 8). At 32 bits
// the words are unchanged.
#include <cstdint>

#include "format/host_device.hpp"

namespace altgrad::quant {

inline constexpr int kMaxRandomBits = 32;

// The bits a word with `bits` random bits has set below them: OR it into the drawn word.
ALTGRAD_HD constexpr std::uint32_t random_bits_mask(int bits) {
  return bits >= kMaxRandomBits ? 0u : ~std::uint32_t{0} >> bits;
}

}  // namespace altgrad::quant
