#pragma once
// 2-D block scaling: one scale per tile × tile square of a row-major (rows, cols) matrix, the tiles
// at the right and bottom edges cut short, so that the matrix and its transpose share every scale
// and every code: Transformer Engine's 2-D weight scaling (NVFP4's 16 × 16 tiles with E4M3 scales,
// Float8BlockScaling's 128 × 128 with FP32 power-of-two scales). A tile is one block of the scale
// format options.scale_format names, its elements quantized exactly as that format's 1-D block
// quantizes them (quant/mx.hpp, quant/block_scale.hpp): E8M0 by options.rule, FP32, FP32 rounded
// to a power of two, or E4M3 under the FP32 scale of the whole matrix. Element (r, c) draws the
// random word of index options.first_index + r·cols + c, whatever its tile. The statistics are
// the 1-D quantizers'; `blocks` counts tiles. Tasks depend on the shape only: the same bits and
// statistics for any thread count.
#include <cstddef>
#include <span>

#include "format/spec.hpp"
#include "quant/mx.hpp"

namespace altgrad::quant {

inline constexpr std::size_t kMaxTile = 128;  // Float8BlockScaling's weight tiles

// options.block_size is the tile's side, 1 to kMaxTile. Throws std::invalid_argument on a shape
// that is not whole rows of `cols`, mismatched sizes or a tile side out of range.
MxStats quantize_tiles(const format::Format& element, std::span<const float> in, std::span<float> out,
                       std::size_t cols, const MxOptions& options);

}  // namespace altgrad::quant
