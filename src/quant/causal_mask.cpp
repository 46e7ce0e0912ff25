#include "quant/causal_mask.hpp"

#include <stdexcept>
#include <string>

namespace altgrad::quant {

CausalMaskCount causal_mask_count(std::size_t elements, std::size_t T, std::size_t block, bool down_columns) {
  if (T == 0 || elements % (T * T) != 0) {
    throw std::invalid_argument("causal_mask_count: " + std::to_string(elements) + " elements are not whole " +
                                std::to_string(T) + " x " + std::to_string(T) + " tiles");
  }
  const std::uint64_t tiles = elements / (T * T);
  CausalMaskCount count;
  count.values = tiles * (T * (T - 1) / 2);
  if (block == 0) return count;
  const auto blocks_over = [&](std::size_t n) { return (n + block - 1) / block; };
  std::uint64_t per_tile = 0;
  if (down_columns) {
    for (std::size_t s = 0; s < T; ++s) per_tile += s / block;  // key s: the whole blocks of queries before it
  } else {
    for (std::size_t t = 0; t < T; ++t) per_tile += blocks_over(T) - blocks_over(t + 1);  // row t attends to t + 1 keys
  }
  count.blocks = tiles * per_tile;
  return count;
}

}  // namespace altgrad::quant
