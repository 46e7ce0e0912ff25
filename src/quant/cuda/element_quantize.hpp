#pragma once
// One element of the GPU quantizer, compiled for the host and the device (ALTGRAD_HD): the portable
// CPU kernel's per-element steps (quant/quantize.cpp: round_step, round_step_simple, count_step)
// over the very format/ functions that kernel calls. The kernels (quant/cuda/*.cu) call these;
// tests/quant/cuda_element_test.cpp compiles them on the host and holds them to
// quantize_block_portable bit for bit, on any machine.
// The scaled input (quant/scaled_input.hpp) is the CPU's own function, host and device.
#include <cstdint>

#include "format/bits.hpp"
#include "format/codec.hpp"
#include "format/host_device.hpp"
#include "format/rounding.hpp"
#include "format/spec.hpp"
#include "quant/scaled_input.hpp"

namespace altgrad::quant::cuda {

// How a rounded value goes back through the scale, as quantize_block_portable chooses: by the
// exact reciprocal where the scale is a power of two, otherwise by correctly rounded division
// (nvcc's default -prec-div=true; never build these kernels with --use_fast_math).
struct Unscale {
  float scale;
  float inverse;
  bool by_inverse;

  ALTGRAD_HD static Unscale for_scale(float s) {
    const bool power_of_two = is_power_of_two_scale(s);
    return {s, power_of_two ? 1.0f / s : 0.0f, power_of_two};
  }
  // A NaN passes through as it is: the CPU's arithmetic keeps a NaN operand's bits (the format's
  // canonical NaN, 0x7FC00000), a GPU's returns its own canonical NaN (0x7FFFFFFF), and the CPU
  // kernel's bits are the definition.
  ALTGRAD_HD float operator()(float q) const {
    if (q != q) return q;
    return by_inverse ? q * inverse : q / scale;
  }
};

// The dequantized value of one element and its range events (0/1): overflow or underflow of the
// product x·scale or of the rounding, as quantize.cpp's event_bits counts them.
struct QuantizedElement {
  float value;
  std::uint32_t overflow;
  std::uint32_t underflow;
};

// x rounded onto f's grid at `scale` under R, and back. `simple_grid` is format::has_simple_grid(f),
// decided once per call: the CPU takes the simple formulations of nearest-even and stochastic
// rounding there, and so does this (the results are the same bits either way; the choice is the
// CPU's so that the two run the same code). `word` is element i's Philox word (stochastic modes).
template <format::Rounding R>
ALTGRAD_HD inline QuantizedElement quantize_element(const format::Format& f, bool simple_grid, float x, float scale,
                                                    const Unscale& unscale, std::uint32_t word) {
  const ScaledInput s = scale_input(x, scale);
  format::Rounded r;
  if constexpr (R == format::Rounding::nearest_even) {
    r = simple_grid ? format::round_nearest_even_simple(f, s.bits) : format::round_to_grid<R>(f, s.bits, word);
  } else if constexpr (R == format::Rounding::stochastic) {
    r = simple_grid ? format::round_stochastic_simple(f, s.bits, word) : format::round_to_grid<R>(f, s.bits, word);
  } else {
    r = format::round_to_grid<R>(f, s.bits, word);
  }
  return {unscale(format::bits_float(r.bits)), s.overflow | r.overflow, s.underflow | r.underflow};
}

// The largest magnitude bits of finite inputs, 0 for a non-finite one: MX's block maximum
// (quant::finite_block_amax). Magnitude bits order like the values they encode.
ALTGRAD_HD inline std::uint32_t finite_magnitude_bits(float x) {
  const std::uint32_t a = format::float_bits(x) & ~format::kSignBit;
  return a < format::kFloatInfBits ? a : 0u;
}

// One thread's share of QuantStats, element by element as count_step counts it. The counts are
// 32-bit: a thread sees far fewer than 2^32 elements (the launchers' grids). The sums are in double
// in this thread's element order, so they differ from the CPU's lane order in their last bits;
// the counts and amax are exact and order independent. add<false> leaves the sums out
// (ErrorSums::skip, quant/stats.hpp): a kernel instance of its own, with no test per element.
struct ElementStats {
  std::uint32_t overflow = 0;
  std::uint32_t underflow = 0;
  std::uint32_t nan_inputs = 0;
  std::uint32_t inf_inputs = 0;
  std::uint32_t zero_inputs = 0;
  std::uint32_t amax_bits = 0;  // max |x| over non-NaN x (Inf included), as magnitude bits
  double sum_sq_error = 0.0;    // Σ (x − out)² over finite x (Inf where out is not finite)
  double sum_sq_input = 0.0;    // Σ x² over finite x

  template <bool kSums = true>
  ALTGRAD_HD void add(float x, const QuantizedElement& q) {
    const std::uint32_t a = format::float_bits(x) & ~format::kSignBit;
    overflow += q.overflow;
    underflow += q.underflow;
    nan_inputs += a > format::kFloatInfBits ? 1u : 0u;
    inf_inputs += a == format::kFloatInfBits ? 1u : 0u;
    zero_inputs += a == 0 ? 1u : 0u;
    const std::uint32_t counted = a > format::kFloatInfBits ? 0u : a;
    amax_bits = counted > amax_bits ? counted : amax_bits;
    if (kSums && a < format::kFloatInfBits) {
      const double err = static_cast<double>(x) - static_cast<double>(q.value);
      const bool out_finite = (format::float_bits(q.value) & ~format::kSignBit) < format::kFloatInfBits;
      sum_sq_error += out_finite ? err * err : __builtin_huge_val();
      sum_sq_input += static_cast<double>(x) * static_cast<double>(x);
    }
  }
};

}  // namespace altgrad::quant::cuda
