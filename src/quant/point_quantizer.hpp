#pragma once
// One quantization point at training time: its settings, its scaling state and the statistics of
// what went through it. The model's hooks own one per active point.
//
// Steps: begin_step(t) fixes the step's delayed scale (from the amaxes of steps before t) and
// clears the step's statistics; apply() quantizes (every micro-batch may call it); end_step()
// records the step's amax, the largest of its calls, into the history. Stochastic rounding draws
// Philox keyed by philox_key(seed, stochastic_rounding) (format/philox_key.hpp), stream = step·2^20 +
// point index, at counter = the element's offset
// among all elements the point saw this step, so a run is the same bits for any thread count and
// any split into calls. Frozen calls (evaluation) record nothing, draw from streams of their own
// and, under delayed scaling, use the scale the next step will use (the current history's).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "quant/engine.hpp"
#include "quant/mx.hpp"
#include "quant/point_settings.hpp"
#include "quant/scaling.hpp"
#include "quant/stats.hpp"

namespace altgrad::quant {

struct PointStats {
  QuantStats values;          // merged over the calls
  std::uint64_t calls = 0;
  float scale = 1.0f;         // the last per-tensor scale used; NaN under block scaling
  std::uint64_t blocks = 0;   // block scaling only
  std::uint64_t clipped_blocks = 0;

  void merge(const PointStats& o);
};

// How the GEMM that reads a copy reduces over the operand (row-major, `cols` wide). Block scaling
// puts its blocks along that axis, within runs of `run` elements no block crosses (a head's
// channels, one sequence's positions); 0 means the whole axis. Per-tensor scaling ignores it.
struct OperandLayout {
  std::size_t cols = 0;
  bool along_rows = false;  // reduces down the columns: the column-wise copy
  std::size_t run = 0;
  // Causal attention probabilities: `cols` × `cols` tiles whose entries above the diagonal are the
  // mask's exact zeros. They are quantized like the rest but not counted (quant/causal_mask.hpp).
  bool causal = false;
};

class PointQuantizer {
 public:
  static constexpr std::uint64_t kMaxPoints = std::uint64_t{1} << 20;
  // Steps below 2^43 keep step·2^20 + point below 2^63, under the bit that marks frozen streams.
  static constexpr std::int64_t kMaxSteps = std::int64_t{1} << 43;

  // Throws SettingsError for a disabled point or an index of kMaxPoints or more.
  PointQuantizer(const PointSettings& settings, std::uint64_t seed, std::uint64_t point_index);

  const PointSettings& settings() const { return settings_; }

  // Throws SettingsError for a step outside [0, kMaxSteps). `error_sums`: whether this step's calls,
  // frozen ones included, gather the two error sums behind relative_error(); the trainer gathers
  // them on the steps that write a metrics line only (docs/quantization.md, "Which steps gather
  // what"). Every other statistic is gathered either way.
  void begin_step(std::int64_t step, ErrorSums error_sums = ErrorSums::gather);
  void end_step();

  // Writes the quantized and dequantized `in` to `out` (same size, no overlap). `row_length` is the
  // contiguous dimension (MX blocks run along it). Frozen: no state or statistics change. Returns
  // this call's statistics.
  PointStats apply(std::span<const float> in, std::span<float> out, std::size_t row_length, bool frozen = false);
  // The copy for a GEMM that reduces along `layout`; apply(in, out, cols) is the row-wise copy.
  // With an engine, `in` and `out` lie in its memory and its arithmetic runs (engine.hpp); the call
  // must be one engine_covers(), else std::logic_error.
  PointStats apply(std::span<const float> in, std::span<float> out, const OperandLayout& layout, bool frozen = false,
                   Engine* engine = nullptr);
  // Whether a call with this layout can run on an engine: per-tensor or no scaling while no code
  // histogram is being collected, or E8M0 blocks of a given size (not "axis") along rows.
  bool engine_covers(const OperandLayout& layout, bool frozen) const;

  // The step's statistics. Under block scaling an operand may be quantized twice, once per
  // reduction axis: step_stats() counts the row-wise copies (blocks along the contiguous
  // dimension), column_stats() the column-wise ones. Per-tensor scaling makes one copy, whatever
  // the axis, and counts it in step_stats(); column_stats() stays empty.
  const PointStats& step_stats() const { return step_; }
  const PointStats& column_stats() const { return columns_; }

  // Per-code counts for code usage, gathered while on; only 8-bit formats under per-tensor or no
  // scaling have them (has_code_histogram).
  bool has_code_histogram() const;
  void collect_codes(bool on);
  std::span<const std::uint64_t> code_histogram() const { return histogram_; }

  // From now on every call quantizes with `scale` whatever the point's scaling says (its delayed
  // history is still recorded): the scale of code-only weights, which makes quantizing them exact.
  // Throws SettingsError for a block-scaled point.
  void fix_scale(float scale);

  // Delayed scaling state, for checkpoints; null under other scalings.
  const DelayedScaling* delayed() const { return delayed_ ? &*delayed_ : nullptr; }
  DelayedScaling* delayed() { return delayed_ ? &*delayed_ : nullptr; }

 private:
  float scale_for(std::span<const float> in, bool frozen, Engine* engine) const;
  void discount_causal_mask(PointStats& call, std::size_t elements, const OperandLayout& layout, bool histogram);
  MxStats quantize_blocks(std::span<const float> in, std::span<float> out, const OperandLayout& layout,
                          MxOptions options, Engine* engine) const;
  std::uint64_t stream(bool frozen) const;

  PointSettings settings_;
  std::uint64_t key_;  // the Philox key of stochastic rounding under the recipe's seed
  std::uint64_t index_;
  std::optional<DelayedScaling> delayed_;
  std::optional<float> fixed_scale_;
  std::int64_t step_number_ = 0;
  float step_scale_ = 1.0f;
  ErrorSums error_sums_ = ErrorSums::gather;
  std::uint64_t step_offset_ = 0;    // elements seen this step: the next call's Philox counter
  std::uint64_t frozen_offset_ = 0;
  PointStats step_;
  PointStats columns_;
  bool collecting_codes_ = false;
  std::vector<std::uint64_t> histogram_;
};

}  // namespace altgrad::quant
