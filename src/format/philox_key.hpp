#pragma once
// One Philox key per purpose (domain separation). Every consumer of randomness in a run keys
// Philox4x32-10 with philox_key(seed, purpose) rather than with the seed itself, so two purposes
// can never draw the same words, whatever their counter layouts: Philox with two different keys
// is two unrelated permutations of the counter space.
//
//   key(seed, purpose) = mix(seed XOR tag(purpose)),  tag(p) = p · 0x9E3779B97F4A7C15 (mod 2^64)
//
// tag is injective (an odd multiplier is invertible mod 2^64) and mix is a bijection of 64-bit
// words (the SplitMix64 finalizer: xor-shifts and odd multipliers), so for every seed the keys of
// distinct purposes differ. mix also spreads nearby seeds across the key space, so runs with
// seeds 1 and 2 do not share words between purposes either (that would need seed1 XOR seed2 =
// tag(p) XOR tag(q), a 64-bit pattern no small seed reaches). docs/quantization.md tabulates each
// purpose's counter layout.
#include <cstdint>

#include "format/host_device.hpp"

namespace altgrad::format {

enum class RandomPurpose : std::uint64_t {
  initialization = 1,       // model parameters (model/init)
  batch_sampling = 2,       // training and evaluation batch offsets (data/byte_dataset)
  stochastic_rounding = 3,  // quantization points during training and evaluation (quant/point_quantizer)
  grid_walk_rounding = 4,   // the bit-space optimizers' fractional steps (optim/gridwalk, optim/madam)
  text_sampling = 5,        // token sampling in text generation (model/sample)
  hessian_probe = 6,        // the start vector of the Hessian power iteration (diag/hessian_power_iteration)
  adam_state_rounding = 7,  // stochastic rounding of AdamW's low-precision moments (optim/quantized_state)
  hadamard_signs = 8,       // the seeded sign vectors of Hadamard transforms (precision/hadamard_operands)
};

inline constexpr std::uint64_t kPurposeTagMultiplier = 0x9E37'79B9'7F4A'7C15u;

ALTGRAD_HD constexpr std::uint64_t purpose_tag(RandomPurpose purpose) {
  return static_cast<std::uint64_t>(purpose) * kPurposeTagMultiplier;
}

// The SplitMix64 output function (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014, with Stafford's "Mix13" constants); each step is invertible.
ALTGRAD_HD constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58'476D'1CE4'E5B9u;
  z = (z ^ (z >> 27)) * 0x94D0'49BB'1331'11EBu;
  return z ^ (z >> 31);
}

ALTGRAD_HD constexpr std::uint64_t philox_key(std::uint64_t seed, RandomPurpose purpose) {
  return mix64(seed ^ purpose_tag(purpose));
}

}  // namespace altgrad::format
