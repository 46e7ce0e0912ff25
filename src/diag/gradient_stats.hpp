#pragma once
// Gradient statistics: norms, and how much signal a quantized gradient keeps relative to its FP32
// reference.
//
// Both accumulate in double over fixed chunks (quant/chunked_reduction.hpp), so the results are the same
// bits for any thread count.
#include <span>

namespace altgrad::diag {

// ‖x‖² = Σ x_i², in double. +Inf when some element is ±Inf (and none is NaN); NaN when one is NaN.
// 0 for an empty span.
double squared_l2_norm(std::span<const float> x);

// max |x_i|: +Inf when some element is ±Inf (and none is NaN); NaN when one is NaN; 0 for an empty
// span.
double max_abs(std::span<const float> x);

// Signal-to-noise ratio of a quantized gradient against its reference, in decibels:
//   snr_db(g_q, g32) = 10 · log10( ‖g32‖² / ‖g_q − g32‖² )
// with the differences taken in double. Cases:
//   +Inf  when the difference is zero (the two are equal element for element, ±0 alike), including
//         when both are all zero;
//   −Inf  when ‖g32‖ = 0 but the difference is not zero;
//   NaN   when either span holds a NaN or ±Inf.
// Throws std::invalid_argument when the sizes differ.
double snr_db(std::span<const float> g_quantized, std::span<const float> g_reference);

}  // namespace altgrad::diag
