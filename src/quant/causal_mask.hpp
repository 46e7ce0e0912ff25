#pragma once
// The causally masked part of attention probabilities, (rows, T) in tiles of T × T: row t of a tile
// is query t's distribution over keys 0..t, and its entries at keys t+1..T-1 are the mask's exact
// zeros. They quantize to zero under every format, rounding and scaling and add nothing to any sum,
// but a plain count would take them for values (diluting underflow and overflow rates), for uses
// of the zero code (inflating code usage) and, under MX, for blocks. This says how many there are,
// so the statistics can leave them out and count only the entries a query can attend to.
#include <cstddef>
#include <cstdint>

namespace altgrad::quant {

struct CausalMaskCount {
  std::uint64_t values = 0;  // masked entries: T(T−1)/2 per tile
  std::uint64_t blocks = 0;  // blocks of `block` that hold only masked entries
};

// `elements` is a whole number of T × T tiles; block 0 counts no blocks (no block scaling). Blocks
// run along each row (over keys), or down each column (over queries) for the column-wise copy.
CausalMaskCount causal_mask_count(std::size_t elements, std::size_t T, std::size_t block, bool down_columns = false);

}  // namespace altgrad::quant
