#include "quant/tiles.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "quant/block_scale.hpp"
#include "quant/quantize.hpp"
#include "quant/random_words.hpp"

namespace altgrad::quant {
namespace {

constexpr std::size_t kMinTilesPerTask = 16;  // below this a thread costs more than it saves

// Where one tile lies: rows [row, row + height), columns [col, col + width).
struct Tile {
  std::size_t row, col, height, width;
  std::size_t size() const { return height * width; }
};

void check_tile_shape(std::span<const float> in, std::span<float> out, std::size_t cols, const MxOptions& options) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("quantize_tiles: " + why); };
  if (in.size() != out.size()) fail("input has " + std::to_string(in.size()) + " elements, output " + std::to_string(out.size()));
  if (cols == 0 || in.size() % cols != 0) fail(std::to_string(in.size()) + " elements are not rows of " + std::to_string(cols));
  if (options.block_size < 1 || options.block_size > kMaxTile) {
    fail("tile side " + std::to_string(options.block_size) + " is outside [1, " + std::to_string(kMaxTile) + "]");
  }
  if (options.scale_format == BlockScaleFormat::e4m3 && options.block_size * options.block_size > kMaxMxBlock) {
    fail("E4M3 block scales take tiles of at most " + std::to_string(kMaxMxBlock) + " elements (side 32), got side " +
         std::to_string(options.block_size));
  }
}

// One tile gathered into x (row by row), quantized at its scale into y, scattered back.
void quantize_tile(const CallContext& c, std::span<const float> in, std::span<float> out, std::size_t cols,
                   const Tile& t, float* x, float* y, std::uint32_t* words, MxStats& stats) {
  const MxOptions& o = c.options;
  const bool stochastic = format::is_stochastic(o.rounding);
  for (std::size_t r = 0; r < t.height; ++r) {
    const std::size_t first = (t.row + r) * cols + t.col;
    std::copy_n(in.data() + first, t.width, x + r * t.width);
    if (stochastic) fill_random(o.seed, o.stream, o.first_index + first, {words + r * t.width, t.width}, o.random_bits);
  }
  const std::size_t n = t.size();
  if (scaled_by_exponents(o)) {
    const int exponent = mx_shared_exponent(c.element, finite_block_amax(x, n), o.rule);
    std::uint64_t overflows = 0;
    quantize_scaled_blocks(c.element, o.rounding, x, y, n, n, &exponent, words, &overflows, stats.elements, 0,
                           o.error_sums);
    stats.clipped_blocks += overflows > 0 ? 1 : 0;
  } else {
    quantize_one_block(c, x, y, n, stochastic ? words : nullptr, stats);
  }
  ++stats.blocks;
  for (std::size_t r = 0; r < t.height; ++r) std::copy_n(y + r * t.width, t.width, out.data() + (t.row + r) * cols + t.col);
}

}  // namespace

MxStats quantize_tiles(const format::Format& element, std::span<const float> in, std::span<float> out,
                       std::size_t cols, const MxOptions& options) {
  check_tile_shape(in, out, cols, options);
  const std::size_t rows = in.size() / cols, side = options.block_size;
  const std::size_t tile_rows = (rows + side - 1) / side, tile_cols = (cols + side - 1) / side;
  const std::size_t tiles = tile_rows * tile_cols;
  const auto tile_at = [&](std::size_t i) {
    const std::size_t row = i / tile_cols * side, col = i % tile_cols * side;
    return Tile{row, col, std::min(side, rows - row), std::min(side, cols - col)};
  };
  const CallContext c = context_for(element, in, options);
  const std::size_t per_task = std::max(kMinTilesPerTask, (tiles + kMaxMxTasks - 1) / kMaxMxTasks);
  const std::size_t tasks = (tiles + per_task - 1) / per_task;
  MxStats partial[kMaxMxTasks];
#pragma omp parallel for schedule(static) if (tasks > 1)
  for (std::size_t task = 0; task < tasks; ++task) {
    std::vector<float> x(side * side), y(side * side);
    std::vector<std::uint32_t> words(side * side);
    const std::size_t end = std::min(tiles, (task + 1) * per_task);
    for (std::size_t i = task * per_task; i < end; ++i) {
      quantize_tile(c, in, out, cols, tile_at(i), x.data(), y.data(), words.data(), partial[task]);
    }
  }
  MxStats total;
  for (std::size_t task = 0; task < tasks; ++task) total.merge(partial[task]);
  return total;
}

}  // namespace altgrad::quant
