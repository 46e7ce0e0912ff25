#include "optim/weight_grid.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "format/bits.hpp"
#include "format/effective_grid.hpp"
#include "format/parse.hpp"

namespace altgrad::optim {
namespace {

// Fixed-scale ranges are cut into chunks only so that every grid is a list of spans.
constexpr std::size_t kFixedChunk = 4096;

void check_blocks(const WeightGrid& grid, std::size_t range_size) {
  if (grid.block == 0 || grid.row_length == 0 || range_size % grid.row_length != 0) {
    throw std::invalid_argument("weight grid: " + std::to_string(range_size) + " weights are not rows of " +
                                std::to_string(grid.row_length) + " in blocks of " + std::to_string(grid.block));
  }
}

}  // namespace

WeightGrid default_weight_grid() { return {format::make_format(format::parse_format("bf16"))}; }

std::size_t span_count(const WeightGrid& grid, std::size_t range_size) {
  if (grid.scaling == GridScaling::fixed) return (range_size + kFixedChunk - 1) / kFixedChunk;
  check_blocks(grid, range_size);
  const std::size_t per_row = (grid.row_length + grid.block - 1) / grid.block;
  return range_size / grid.row_length * per_row;
}

void grid_spans(const WeightGrid& grid, std::span<const float> weights, std::span<GridSpan> out) {
  const std::size_t n = weights.size();
  if (out.size() < span_count(grid, n)) throw std::invalid_argument("grid_spans: output too small");
  if (grid.scaling == GridScaling::fixed) {
    for (std::size_t s = 0; s * kFixedChunk < n; ++s) out[s] = {s * kFixedChunk, std::min(n, (s + 1) * kFixedChunk), grid.scale};
    return;
  }
  const std::size_t per_row = (grid.row_length + grid.block - 1) / grid.block;
  const std::size_t count = n / grid.row_length * per_row;
#pragma omp parallel for schedule(static)
  for (std::size_t s = 0; s < count; ++s) {
    const std::size_t row = s / per_row;
    const std::size_t begin = row * grid.row_length + (s % per_row) * grid.block;
    const std::size_t end = std::min(begin + grid.block, (row + 1) * grid.row_length);
    float amax = 0.0f;
    for (std::size_t i = begin; i < end; ++i) {
      if (std::isfinite(weights[i])) amax = std::max(amax, std::fabs(weights[i]));
    }
    // The quantizer stores x · 2^−k: the block's scale is 2^−k.
    const int k = quant::mx_shared_exponent(grid.format, amax, grid.rule);
    out[s] = {begin, end, format::exp2_exact(-k)};
  }
}

void grid_spacing(const WeightGrid& grid, std::span<const float> weights, std::span<float> out) {
  std::vector<GridSpan> spans(span_count(grid, weights.size()));
  grid_spans(grid, weights, spans);
  for (const GridSpan& s : spans) {
    for (std::size_t i = s.begin; i < s.end; ++i) out[i] = format::scaled_spacing(grid.format, weights[i], s.scale);
  }
}

}  // namespace altgrad::optim
