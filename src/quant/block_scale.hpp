#pragma once
// Block scaling with a scale format other than E8M0 (quant/mx.hpp has E8M0, MX proper): one FP32
// multiplier per block, the same rounded down to a power of two, or NVFP4's two levels, an E4M3
// decode scale per block under an FP32 scale of the whole tensor; and E8M0 under the
// three_quarters rule, whose multiplier (3/4)·2^−k is no power of two. docs/formats.md ("Block scale
// formats") gives each definition and its source; these functions are those definitions, step by
// step, in the sources' FP32 operation order.
#include <cstddef>
#include <span>

#include "format/spec.hpp"
#include "quant/mx.hpp"

namespace altgrad::quant {

// FP32 and FP32 power-of-two scale formats: the block's multiplier s (elements stored as
// Q(fl(x·s)), read back as q / s) for the block's largest finite |x|: s = fl(max finite / amax),
// at most FLT_MAX; its mantissa bits cleared for fp32_pow2. A zero or non-finite amax gives 1.
float block_multiplier(const format::Format& element, float amax, BlockScaleFormat scale_format);

// A multiplier as the fp32_pow2 scale format keeps it: its mantissa bits cleared, the power of two
// at or below it (TE's power_2_scale; torchao's round_scales_to_power_of_2 for a per-tensor scale).
float power_of_two_scale(float s);

// MxScaleRule::three_quarters' multiplier (3/4)·2^−k, k the floor rule's shared exponent for the
// block's largest finite |x| (0 for a zero or non-finite amax). Exact: k lies in [−127, 127].
float three_quarters_multiplier(const format::Format& element, float amax);

// NVFP4's per-tensor level, from the largest finite |x| of the whole copy. `range` = 448 · the
// element format's max finite (2688 for E2M1).
struct TensorScale {
  float amax = 0.0f;
  float range = 0.0f;
  float encode = 1.0f;  // S_enc = fl(range / amax), at most FLT_MAX; 1 where amax is 0
  float decode = 1.0f;  // S_dec = fl(1 / S_enc)
};
TensorScale tensor_scale(const format::Format& element, float amax);

// The block's E4M3 decode scale s_b (its value; E4M3 round to nearest even, saturating at 448) for
// the block's largest finite |x|: fl(amax · fl(S_enc · fl(1 / max finite))). Can be an E4M3
// subnormal, or 0 (a flushed block).
float e4m3_block_scale(const format::Format& element, float block_amax, const TensorScale& tensor);

// The factor elements are multiplied by before rounding: fl(1 / fl(s_b · S_dec)), at most FLT_MAX
// (FLT_MAX for a flushed block).
float e4m3_element_factor(float block_scale, const TensorScale& tensor);

// What every block of one call shares: for E4M3 block scales, the tensor scale of the whole input.
struct CallContext {
  const format::Format& element;
  const MxOptions& options;
  TensorScale tensor;  // e4m3 only
};
CallContext context_for(const format::Format& element, std::span<const float> in, const MxOptions& options);

// One block of n contiguous elements at its own scale (scaled_by_exponents(options) false), its
// statistics added to `stats` (without counting the block); words: one per element, or null.
void quantize_one_block(const CallContext& c, const float* x, float* y, std::size_t n, const std::uint32_t* words,
                        MxStats& stats);

// quantize_mx and quantize_mx_columns where scaled_by_exponents(options) is false; quant/mx.cpp
// hands them over. Same layouts, same random words, same statistics.
MxStats quantize_scaled_rows(const format::Format& element, std::span<const float> in, std::span<float> out,
                             std::size_t row_length, const MxOptions& options);
MxStats quantize_scaled_columns(const format::Format& element, std::span<const float> in, std::span<float> out,
                                std::size_t cols, std::size_t run, const MxOptions& options);

}  // namespace altgrad::quant
