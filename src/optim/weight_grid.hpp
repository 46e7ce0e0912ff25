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

// A run of consecutive elements of a range that share one scale.
struct GridSpan {
  std::size_t begin = 0, end = 0;  // offsets within the range
  float scale = 1.0f;
};

// The spans of `weights` (one range) under `grid`, in order: one per MX block, or chunks of a
// fixed size under one scale. `out` needs span_count() entries. Throws std::invalid_argument when a
// block grid's row length does not divide the range.
std::size_t span_count(const WeightGrid& grid, std::size_t range_size);
void grid_spans(const WeightGrid& grid, std::span<const float> weights, std::span<GridSpan> out);

// S(w) for every element of a range, for tests and diagnostics (optimizers compute it inline).
void grid_spacing(const WeightGrid& grid, std::span<const float> weights, std::span<float> out);

}  // namespace altgrad::optim
