#pragma once
// A run of the parameter buffer with one weight-decay rule and one optimizer, the unit every optimizer iterates over.
#include <cstddef>
#include <span>
#include <string_view>

namespace altgrad::optim {

// nanoGPT decays tensors of 2 or more dimensions (embeddings and Linear weights) and not biases or
// norm weights; the trainer builds one range per parameter tensor with that rule.
struct ParameterRange {
  std::size_t offset = 0;
  std::size_t size = 0;
  bool decay = true;
  // Updated by AdamW whatever the configured optimizer: the norm gains, biases and embeddings a
  // bit-space optimizer leaves alone (docs/optimizers.md). SGD refuses ranges marked so; AdamW updates them as any other.
  bool adamw_only = false;
};

// Throws std::invalid_argument, naming `who`, unless the ranges lie inside and cover exactly
// `parameter_count` parameters.
void check_ranges(std::string_view who, std::size_t parameter_count, std::span<const ParameterRange> ranges);

}  // namespace altgrad::optim
