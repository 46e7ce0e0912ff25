#pragma once
// What the quantizer's vector kernels (quant/vector_kernel.cpp for AVX-512,
// quant/vector_kernel_avx2.cpp for AVX2) share: where a vector of sixteen starts, when a scale
// lets them skip checking their outputs, and which instance of their Quantizer takes a format.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "format/codec.hpp"
#include "format/spec.hpp"
#include "quant/scaled_input.hpp"

namespace altgrad::quant::vector_lanes {

// The lane p falls in when vectors start on 64-byte boundaries: loads and stores at such vectors
// never split a cache line, which on misaligned buffers costs more than the rounding.
inline std::size_t lane_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 / sizeof(float); }

// The address `lanes` 4-byte elements before p, where a vector's lane 0 is: it may lie before the
// array, but those lanes are masked off, and masked loads and stores do not touch them.
template <typename T>
T* lanes_before(T* p, std::size_t lanes) {
  return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(p) - lanes * sizeof(float));
}

// Max finite taken back through the scale stays finite, so every output of a vector within max
// finite is finite too, and the kernel need not check its outputs.
inline bool outputs_stay_finite(const format::Format& f, float scale) {
  const float back = is_power_of_two_scale(scale) ? f.max_finite() * (1.0f / scale) : f.max_finite() / scale;
  return std::isfinite(back);
}

// The largest k at which outputs_stay_finite(f, 2^−k): max finite = m·2^E with 1 ≤ m < 2, and
// m·2^(E + k) is finite exactly when E + k ≤ 127. An integer test of an MX block's exponent in
// place of the division that outputs_stay_finite() costs.
inline int largest_finite_exponent(const format::Format& f) {
  return 127 - format::detail::floor_log2_bits(f.max_finite_bits);
}

// op(Quantizer<R, negative zero, powers of two>{}) for the rounding (nearest-even or stochastic) and
// the format's sign rule; for nearest-even, whether its grid is powers of two (M = 0), whose ties
// need their own formulation.
template <template <format::Rounding, bool, bool> class Quantizer, typename Op>
void with_quantizer(const format::Format& f, format::Rounding rounding, const Op& op) {
  constexpr format::Rounding kNearest = format::Rounding::nearest_even, kStochastic = format::Rounding::stochastic;
  const bool negative_zero = f.has_negative_zero, powers_of_two = f.spec.mantissa_bits == 0;
  if (rounding == kStochastic) {
    if (negative_zero) return op(Quantizer<kStochastic, true, false>{});
    return op(Quantizer<kStochastic, false, false>{});
  }
  if (negative_zero && powers_of_two) return op(Quantizer<kNearest, true, true>{});
  if (negative_zero) return op(Quantizer<kNearest, true, false>{});
  if (powers_of_two) return op(Quantizer<kNearest, false, true>{});
  op(Quantizer<kNearest, false, false>{});
}

}  // namespace altgrad::quant::vector_lanes
