#pragma once
// Where a quantizer's arithmetic runs, for arrays in that place's memory. PointQuantizer::apply
// calls the host's functions (quantize.hpp, mx.hpp, scaling.hpp) unless a call names an engine: the
// GPU's (quant/cuda/device_quantize.hpp), whose copies and exact statistics are the host's bit for
// bit, or a test's. An engine covers what the GPU's quantizer does: per-tensor scales (any format
// and rounding, no code histogram) and MX blocks with E8M0 scales along rows
// (PointQuantizer::engine_covers).
#include <cstddef>
#include <span>

#include "format/spec.hpp"
#include "quant/mx.hpp"
#include "quant/quantize.hpp"
#include "quant/stats.hpp"

namespace altgrad::quant {

class Engine {
 public:
  virtual ~Engine() = default;
  // amax_of (scaling.hpp): max |x| over the non-NaN elements.
  virtual float amax(std::span<const float> x) = 0;
  // quantize (quantize.hpp), without a code histogram.
  virtual QuantStats quantize(const format::Format& f, std::span<const float> in, std::span<float> out,
                              const QuantizeOptions& options) = 0;
  // quantize_mx (mx.hpp) with E8M0 scales.
  virtual MxStats quantize_mx(const format::Format& element, std::span<const float> in, std::span<float> out,
                              std::size_t row_length, const MxOptions& options) = 0;
};

}  // namespace altgrad::quant
