#pragma once
// The bytes a run keeps for its weights and its optimizer's state (docs/optimizers.md, "Memory"),
// so that an optimizer with less state shows its saving next to FP32 AdamW. Gradients and
// activations are left out: every optimizer needs the same.
#include <cstddef>
#include <string>
#include <vector>

#include "optim/code_weights.hpp"
#include "optim/optimizer.hpp"

namespace altgrad::optim {

struct StateBytes {
  std::string name;  // the state tensor's name in optimizer.safetensors
  std::size_t bytes;
};

struct MemoryFootprint {
  // The weights carried from step to step: 4 bytes per FP32 parameter, and for code-only weights
  // their codes plus one 4-byte scale per tensor.
  std::size_t weight_bytes = 0;
  // Each state tensor as stored, in state() order, then those of quantized_state(): their codes
  // plus 4 bytes per group scale.
  std::vector<StateBytes> state;
  std::size_t code_weights = 0;   // parameters kept as codes
  // The FP32 values of code-only weights, decoded into the buffer the FP32 kernels read: rewritten
  // from the codes every step, never read back. Not part of weight_bytes.
  std::size_t decoded_weight_bytes = 0;

  std::size_t state_bytes() const;
  std::size_t total_bytes() const { return weight_bytes + state_bytes(); }
};

// Counted from the buffers the optimizer and the code store hold (null: no code-only weights), not
// from a formula.
MemoryFootprint memory_footprint(const Optimizer& optimizer, const CodeWeights* codes = nullptr);

// "836736 parameters: weights 3346944 B + state 6693888 B (exp_avg, exp_avg_sq) = 10040832 B"
std::string describe(const MemoryFootprint& memory, std::size_t parameters);

}  // namespace altgrad::optim
