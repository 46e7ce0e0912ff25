#include "quant/point_quantizer.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "format/codec.hpp"
#include "quant/causal_mask.hpp"
#include "quant/mx.hpp"
#include "format/philox_key.hpp"
#include "quant/quantize.hpp"
#include "quant/tiles.hpp"

namespace altgrad::quant {
namespace {

// Frozen (evaluation) calls draw from streams no training step uses.
constexpr std::uint64_t kFrozenStreams = std::uint64_t{1} << 63;

// The reduction run of a call: `run`, else the whole axis (all rows for the column-wise copy).
std::size_t run_of(const OperandLayout& layout, std::size_t elements) {
  if (layout.run) return layout.run;
  return layout.along_rows ? (layout.cols ? elements / layout.cols : 0) : layout.cols;
}

}  // namespace

void PointStats::merge(const PointStats& o) {
  values.merge(o.values);
  calls += o.calls;
  if (o.calls) scale = o.scale;
  blocks += o.blocks;
  clipped_blocks += o.clipped_blocks;
}

PointQuantizer::PointQuantizer(const PointSettings& settings, std::uint64_t seed, std::uint64_t point_index)
    : settings_(settings), key_(format::philox_key(seed, format::RandomPurpose::stochastic_rounding)), index_(point_index) {
  if (!settings.enabled) throw SettingsError("PointQuantizer: the point is not enabled");
  if (point_index >= kMaxPoints) throw SettingsError("PointQuantizer: point index " + std::to_string(point_index) + " too large");
  if (settings.scaling == Scaling::delayed) delayed_.emplace(settings.format, settings.history, settings.amax, settings.margin);
  if (has_code_histogram()) histogram_.assign(settings.format.code_count(), 0);
  begin_step(0);
}

bool PointQuantizer::has_code_histogram() const {
  return settings_.format.width <= 8 && settings_.scaling != Scaling::block;
}

void PointQuantizer::collect_codes(bool on) {
  collecting_codes_ = on && has_code_histogram();
  if (collecting_codes_) std::fill(histogram_.begin(), histogram_.end(), 0);
}

void PointQuantizer::begin_step(std::int64_t step, ErrorSums error_sums) {
  if (step < 0 || step >= kMaxSteps) throw SettingsError("PointQuantizer: step " + std::to_string(step) + " outside [0, 2^43)");
  step_number_ = step;
  error_sums_ = error_sums;
  step_offset_ = 0;
  frozen_offset_ = 0;
  step_ = PointStats{};
  columns_ = PointStats{};
  step_scale_ = fixed_scale_ ? *fixed_scale_ : delayed_ ? delayed_->scale() : 1.0f;
  step_.scale = settings_.scaling == Scaling::block ? std::numeric_limits<float>::quiet_NaN() : step_scale_;
}

void PointQuantizer::end_step() {
  if (delayed_ && step_.calls > 0) delayed_->record(step_.values.amax);
}

void PointQuantizer::fix_scale(float scale) {
  if (settings_.scaling == Scaling::block) throw SettingsError("PointQuantizer: a block-scaled point has no per-tensor scale to fix");
  fixed_scale_ = scale;
  step_scale_ = scale;
}

float PointQuantizer::scale_for(std::span<const float> in, bool frozen, Engine* engine) const {
  if (fixed_scale_) return *fixed_scale_;
  switch (settings_.scaling) {
    case Scaling::tensor: {
      const float amax = engine ? engine->amax(in) : amax_of(in);
      return per_tensor_scale(settings_.scale_format, scale_from_amax(settings_.format, amax, settings_.margin));
    }
    case Scaling::delayed:
      // An evaluation between steps (or of a restored checkpoint) uses the scale the next step will:
      // the history's, which already holds the amax of the step that just ended.
      return frozen ? delayed_->scale() : step_scale_;
    case Scaling::none:
    case Scaling::block:
      break;
  }
  return 1.0f;
}

std::uint64_t PointQuantizer::stream(bool frozen) const {
  const std::uint64_t step = static_cast<std::uint64_t>(step_number_);
  return (frozen ? kFrozenStreams : 0) | (step * kMaxPoints + index_);
}

// The masked entries are +0 in, +0 out: one more value and one more use of +0's code each, and
// under MX blocks of nothing else. Taking exactly those back out leaves the statistics of the
// entries a query can attend to.
void PointQuantizer::discount_causal_mask(PointStats& call, std::size_t elements, const OperandLayout& layout,
                                          bool histogram) {
  const bool blocked = settings_.scaling == Scaling::block;
  const std::size_t block = blocked ? block_length(settings_, run_of(layout, elements)) : 0;
  const CausalMaskCount masked = causal_mask_count(elements, layout.cols, block, layout.along_rows);
  call.values.count -= masked.values;
  call.values.zero_inputs -= masked.values;
  call.blocks -= masked.blocks;
  if (histogram) histogram_[format::code_of_grid_value(settings_.format, 0u)] -= masked.values;
}

bool PointQuantizer::engine_covers(const OperandLayout& layout, bool frozen) const {
  if (settings_.scaling == Scaling::block) {
    return settings_.scale_format == BlockScaleFormat::e8m0 && settings_.scale_rule != MxScaleRule::three_quarters &&
           settings_.block != kAxisBlock && !settings_.tiles && !layout.along_rows;
  }
  return !(collecting_codes_ && !frozen);
}

MxStats PointQuantizer::quantize_blocks(std::span<const float> in, std::span<float> out, const OperandLayout& layout,
                                        MxOptions options, Engine* engine) const {
  // Tiles are the matrix's whatever the GEMM's axis: one copy serves both (axis_dependent false).
  if (settings_.tiles) return quantize_tiles(settings_.format, in, out, layout.cols, options);
  const std::size_t run = run_of(layout, in.size());
  options.block_size = block_length(settings_, run);
  if (engine) return engine->quantize_mx(settings_.format, in, out, run, options);
  if (layout.along_rows) return quantize_mx_columns(settings_.format, in, out, layout.cols, run, options);
  return quantize_mx(settings_.format, in, out, run, options);
}

PointStats PointQuantizer::apply(std::span<const float> in, std::span<float> out, std::size_t row_length, bool frozen) {
  return apply(in, out, OperandLayout{row_length, false, 0}, frozen);
}

PointStats PointQuantizer::apply(std::span<const float> in, std::span<float> out, const OperandLayout& layout,
                                 bool frozen, Engine* engine) {
  if (engine && !engine_covers(layout, frozen)) {
    throw std::logic_error("PointQuantizer: an engine was given a call it does not cover (engine_covers)");
  }
  std::uint64_t& offset = frozen ? frozen_offset_ : step_offset_;
  PointStats call;
  call.calls = 1;
  const bool column_copy = settings_.scaling == Scaling::block && !settings_.tiles && layout.along_rows;
  if (settings_.scaling == Scaling::block) {
    const MxOptions options{settings_.block, settings_.scale_rule, settings_.rounding, key_,
                            stream(frozen), offset, settings_.scale_format, error_sums_, settings_.sr_bits};
    const MxStats mx = quantize_blocks(in, out, layout, options, engine);
    call.values = mx.elements;
    call.scale = std::numeric_limits<float>::quiet_NaN();
    call.blocks = mx.blocks;
    call.clipped_blocks = mx.clipped_blocks;
  } else {
    QuantizeOptions options{settings_.rounding, scale_for(in, frozen, engine), key_, stream(frozen), offset, {},
                            error_sums_, settings_.sr_bits};
    if (collecting_codes_ && !frozen) options.code_histogram = histogram_;
    call.values = engine ? engine->quantize(settings_.format, in, out, options) : quantize(settings_.format, in, out, options);
    call.scale = options.scale;
  }
  if (layout.causal) discount_causal_mask(call, in.size(), layout, collecting_codes_ && !frozen);
  offset += in.size();
  if (!frozen) (column_copy ? columns_ : step_).merge(call);
  return call;
}

}  // namespace altgrad::quant
