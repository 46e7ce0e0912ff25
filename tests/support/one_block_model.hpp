#pragma once
// The one-block GPT the layer-level quantization tests build their points and weights from.
#include <cstddef>

#include "model/config.hpp"

namespace altgrad::test_support {

inline model::GptConfig one_block_model(std::size_t n_head, std::size_t n_embd, std::size_t block_size) {
  model::GptConfig c;
  c.n_layer = 1;
  c.n_head = n_head;
  c.n_embd = n_embd;
  c.block_size = block_size;
  c.vocab_size = 256;
  return c;
}

}  // namespace altgrad::test_support
