#pragma once
// Code-only weights (`master_weights = false`, docs/optimizers.md "Code-only weights"): a tensor
// kept as codes of its grid's format, one byte each for formats of up to 8 bits (two for the
// wider ones; no format exceeds 16),
// plus one power-of-two scale; its value is decode(code) / scale, exactly, in FP32. No FP32 master
// copy is carried from step to step: gridwalk moves the codes, and the trainer decodes them into
// the parameter buffer the FP32 kernels read.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/spec.hpp"
#include "optim/code_bytes.hpp"

namespace altgrad::optim {

struct CodeTensor {
  std::size_t range = 0;   // the optimizer's parameter range
  std::size_t offset = 0;  // in the parameter buffer
  std::size_t size = 0;
  format::Format format;
  std::string format_name;  // as the config named it; checkpoints record it
  float scale = 1.0f;
  std::vector<std::uint8_t> codes;  // code_bytes() per element, little-endian

  std::size_t code_bytes() const { return optim::code_bytes(format); }
  std::uint32_t code(std::size_t i) const;
  void set_code(std::size_t i, std::uint32_t code);
  float value(std::size_t i) const;
};

// The scale 2^e of a tensor whose largest magnitude is `amax`: the largest e that keeps amax·2^e at
// least `headroom` binades below the format's max finite, capped so that every value of the format
// divided by 2^e is exact in FP32 (no bits lost below FP32's smallest subnormal, no overflow).
// 1 when amax is 0 or not finite.
float code_scale(const format::Format& f, float amax, int headroom);

class CodeWeights {
 public:
  // Encodes `weights` (range `range`, at `offset` in the parameter buffer) by round to nearest
  // even under code_scale.
  void add(std::size_t range, std::size_t offset, const format::Format& f, std::string format_name,
           std::span<const float> weights, int headroom);
  // Adds a tensor as stored (a checkpoint) that check_stored() accepted: read_code_tensor() checks
  // every tensor it returns, before load_model() decodes it, so it is not checked twice.
  void add_stored(CodeTensor tensor);
  // Throws std::invalid_argument when the codes do not fit the size, the scale is not a power of
  // two, or a code's value under it is not finite.
  static void check_stored(const CodeTensor& tensor);

  std::span<CodeTensor> tensors() { return tensors_; }
  std::span<const CodeTensor> tensors() const { return tensors_; }
  // The tensor of range `range`, or null when that range keeps FP32 weights.
  const CodeTensor* find(std::size_t range) const;
  CodeTensor* find(std::size_t range);
  // The tensor stored at `offset` of the parameter buffer, or null.
  const CodeTensor* at_offset(std::size_t offset) const;

  // Writes every tensor's values into its place in `params`.
  void decode_into(std::span<float> params) const;
  // Codes plus one 4-byte scale per tensor.
  std::size_t bytes() const;
  std::size_t elements() const;

 private:
  std::vector<CodeTensor> tensors_;
};

}  // namespace altgrad::optim
