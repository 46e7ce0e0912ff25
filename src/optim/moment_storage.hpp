#pragma once
// How AdamW stores its two moments between steps (docs/optimizers.md, "Low-precision optimizer
// state"), as plain data the trainer fills from the config keys adam_m_format, adam_v_format,
// adam_state_group and adam_state_rounding. The default, FP32 for both, is AdamW as it always was.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "format/rounding.hpp"

namespace altgrad::optim {

// The format name that keeps a moment in FP32 rather than as codes.
inline constexpr std::string_view kFp32State = "fp32";
// The largest group: a step keeps one group of each moment in FP32 on the stack while it computes
// the group's scale, so that the step allocates nothing.
inline constexpr std::size_t kMaxStateGroup = 4096;

struct MomentStorage {
  std::string m_format{kFp32State};  // exp_avg: "fp32" or any format name of docs/formats.md (signed)
  std::string v_format{kFp32State};  // exp_avg_sq: "fp32" or any format name (v >= 0, so unsigned ones too)
  std::size_t group = 128;           // consecutive elements of one parameter tensor sharing a scale
  format::Rounding rounding = format::Rounding::nearest_even;  // applied on every write
  std::uint64_t seed = 0;            // the run's seed: stochastic rounding's Philox key

  bool m_quantized() const { return m_format != kFp32State; }
  bool v_quantized() const { return v_format != kFp32State; }
};

}  // namespace altgrad::optim
