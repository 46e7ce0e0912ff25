#pragma once
// A state tensor kept as codes of a small format with one FP32 scale per group of consecutive
// elements (optim/state_groups.hpp), as torchao's low-bit AdamW and FP8-LM keep Adam's moments
// (docs/optimizers.md, "Low-precision optimizer state"). Element i of group g stands for
//
//     decode(code_i) · d_g
//
// and a write replaces a whole group at once:
//
//     d = max(amax, 1e-12) / max_finite      (FP32; raised to FP32's smallest normal, 2^-126, if below)
//     code_i = round(clamp(x_i / d, −max_finite, max_finite))   (x_i / d in FP32)
//
// torchao's AdamWFp8 scale (optim/subclass_fp8.py): not a power of two, so the largest element maps
// onto max finite (saturating; the clamp only catches x / d a rounding above it). The floor on d
// matters only for formats whose max finite is near FP32's (bf16, e8m0fnu): there d would
// underflow, and 2^-126 keeps x / d finite and exact.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/rounding.hpp"
#include "format/spec.hpp"
#include "optim/code_bytes.hpp"
#include "optim/state_groups.hpp"

namespace altgrad::optim {

// d for a group whose largest magnitude is `amax` (NaN and Inf pass through: a moment that is not
// finite gives a scale that is not finite, as it would give FP32 state that is not).
float group_scale(const format::Format& f, float amax);

class QuantizedState {
 public:
  // `size` elements (the parameter buffer's), all codes of +0 and every scale 1 until written.
  QuantizedState(std::string name, const format::Format& f, std::string format_name, StateGroups groups,
                 std::size_t size);

  const std::string& name() const { return name_; }
  const format::Format& format() const { return format_; }
  const std::string& format_name() const { return format_name_; }  // canonical (format::format_name)
  const StateGroups& groups() const { return groups_; }
  std::size_t size() const { return size_; }
  // 1 for formats of up to 8 bits, else 2; codes are little-endian.
  std::size_t code_bytes() const { return optim::code_bytes(format_); }
  std::span<const std::uint8_t> code_data() const { return codes_; }
  std::span<const float> scales() const { return scales_; }
  std::uint32_t code(std::size_t i) const;

  // Writes group g's values, out[k] for element begin(g) + k.
  void decode_group(std::size_t g, float* out) const;
  // Replaces group g by `values` (end(g) − begin(g) of them) under `rounding`. The stochastic modes
  // draw element i's word as format::philox_word(key, stream, i), i its offset in the buffer, so
  // the codes depend on neither the thread nor the order groups are written in.
  void encode_group(std::size_t g, const float* values, format::Rounding rounding, std::uint64_t key,
                    std::uint64_t stream);

  // Replaces every code and scale by stored ones (a checkpoint). Throws std::invalid_argument when
  // the sizes differ, a scale is not finite and positive, or a code is not a finite value of the
  // format; on a throw nothing has changed.
  void restore(std::span<const std::uint8_t> codes, std::span<const float> scales);

  // The bytes carried between steps: the codes plus 4 per scale.
  std::size_t bytes() const { return codes_.size() + scales_.size() * sizeof(float); }

 private:
  void set_code(std::size_t i, std::uint32_t code);

  std::string name_;
  format::Format format_;
  std::string format_name_;
  StateGroups groups_;
  std::size_t size_;
  std::vector<std::uint8_t> codes_;
  std::vector<float> scales_;  // one per group
  // decode(code) for every code (at most 2^16): decoding is a lookup. Derived from the format, so
  // neither stored nor counted as state.
  std::vector<float> code_values_;
};

}  // namespace altgrad::optim
