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

// Fixed-scale ranges are cut into chunks so that every grid is a list of short spans.
constexpr std::size_t kFixedChunk = kMaxGridSpan;

void check_blocks(const WeightGrid& grid, std::size_t range_size) {
  if (grid.block == 0 || grid.block > quant::kMaxMxBlock || grid.row_length == 0 || range_size % grid.row_length != 0) {
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

void span_spacing(const format::Format& f, const float* w, std::size_t n, float scale, float* out) {
  const int M = f.spec.mantissa_bits;
  const int top = static_cast<int>(f.max_magnitude >> M) - f.spec.bias;  // as format::spacing
  const int below_normal = f.min_normal_exp - (f.spec.subnormals ? M : 0);
  const int min_normal_exp = f.min_normal_exp;
  // The exponent of S·scale, exact when the magnitude bits `a` of w·scale are a normal FP32 number
  // and the exponent is one of a normal FP32 number.
  const auto step_exponent = [=](std::uint32_t a) {
    int lead = static_cast<int>(a >> 23) - 127;  // floor(log2 |x|) for a normal x
    lead = lead < top ? lead : top;
    return lead >= min_normal_exp ? lead - M : below_normal;
  };
  const auto fast = [](std::uint32_t a, int e) { return a >= 0x0080'0000u && a < 0x7F80'0000u && e >= -126; };
  int slow = 0;
#pragma omp simd reduction(| : slow)
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t a = format::float_bits(w[i] * scale) & 0x7FFF'FFFFu;
    const int e = step_exponent(a);
    out[i] = format::bits_float(static_cast<std::uint32_t>(e + 127) << 23) / scale;
    slow |= fast(a, e) ? 0 : 1;
  }
  if (!slow) return;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t a = format::float_bits(w[i] * scale) & 0x7FFF'FFFFu;
    if (!fast(a, step_exponent(a))) out[i] = format::scaled_spacing(f, w[i], scale);
  }
}

void grid_spacing(const WeightGrid& grid, std::span<const float> weights, std::span<float> out) {
  std::vector<GridSpan> spans(span_count(grid, weights.size()));
  grid_spans(grid, weights, spans);
  for (const GridSpan& s : spans) span_spacing(grid.format, weights.data() + s.begin, s.end - s.begin, s.scale, out.data() + s.begin);
}

}  // namespace altgrad::optim
