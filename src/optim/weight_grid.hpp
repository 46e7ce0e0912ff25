#pragma once
// The grid a parameter range lives on, as plain data the trainer fills from the quantization recipe
// (optim/ knows no recipes): a format and its scale, either one scale for the whole range (a
// per-tensor current or delayed scale, or 1 for an unscaled or storage-format grid) or one
// power-of-two scale per MX block, which is a function of the weights themselves and so is found
// here, from the weights at the time of the step, exactly as the quantizer finds it.
//
// S(w) = format::scaled_spacing(format, w, scale) is the grid's spacing at w (docs/optimizers.md).
#include <cstddef>
#include <span>

#include "format/spec.hpp"
#include "quant/mx.hpp"

namespace altgrad::optim {

enum class GridScaling {
  fixed,   // one scale for the range: `scale`
  blocks,  // MX: rows of `row_length`, blocks of `block` along each row (the last may be shorter)
};

struct WeightGrid {
  format::Format format;
  GridScaling scaling = GridScaling::fixed;
  float scale = 1.0f;
  std::size_t block = 32;
  std::size_t row_length = 0;
  quant::MxScaleRule rule = quant::MxScaleRule::floor;
};

// bf16, unscaled: the grid of a range nobody configured.
WeightGrid default_weight_grid();

// The longest span: fixed-scale ranges are cut into chunks of this many, and MX blocks are at most
// quant::kMaxMxBlock long.
inline constexpr std::size_t kMaxGridSpan = 4096;
static_assert(quant::kMaxMxBlock <= kMaxGridSpan);

// A run of consecutive elements of a range that share one scale, at most kMaxGridSpan long.
struct GridSpan {
  std::size_t begin = 0, end = 0;  // offsets within the range
  float scale = 1.0f;
};

// The spans of `weights` (one range) under `grid`, in order: one per MX block, or chunks of a
// fixed size under one scale. `out` needs span_count() entries. Throws std::invalid_argument when a
// block grid's row length does not divide the range.
std::size_t span_count(const WeightGrid& grid, std::size_t range_size);
void grid_spans(const WeightGrid& grid, std::span<const float> weights, std::span<GridSpan> out);

// S(w) = format::scaled_spacing(f, w[i], scale) for the n elements of one span, bit for bit, in a
// loop the compiler vectorizes: exponent arithmetic where w·scale is a normal FP32 number and S a
// normal one, format::scaled_spacing for the few others (zeros under formats whose subnormal step
// FP32 holds only as a subnormal, FP32 subnormals, Inf, NaN).
void span_spacing(const format::Format& f, const float* w, std::size_t n, float scale, float* out);

// S(w) for every element of a range.
void grid_spacing(const WeightGrid& grid, std::span<const float> weights, std::span<float> out);

}  // namespace altgrad::optim
