#pragma once
// Range fit (docs/quantization.md, "Value profiles"): how values would sit in a candidate format
// at a given scale, without quantizing them. With nearest-even rounding, as the quantizer counts
// them, a finite x with a = fl(|x|·s):
//   overflows           a ≥ overflow: it rounds beyond max finite
//   flushes to zero     x ≠ 0 and a ≤ flush: it rounds to zero (underflow_pct's event)
//   lands subnormal     flush < a < min_normal: a nonzero result below the smallest normal
// The thresholds are found once per format by bisection over float32 bit patterns with the
// quantizer itself, so the definitions are the quantizer's by construction.
#include <cstddef>
#include <cstdint>
#include <span>

#include "format/spec.hpp"
#include "quant/mx.hpp"

namespace altgrad::quant {

struct RangeThresholds {
  float flush = 0;      // the largest a that rounds to zero (0 when only 0 does)
  float overflow = 0;   // the smallest a that rounds beyond max finite (+Inf when none does)
  float min_normal = 0;
};

RangeThresholds range_thresholds(const format::Format& f);

struct RangeFit {
  std::uint64_t count = 0;  // values seen, non-finite included
  std::uint64_t overflow = 0, subnormal = 0, flush = 0;

  void merge(const RangeFit& o);
};

// x at one scale.
void add_range_fit(RangeFit& fit, const RangeThresholds& t, std::span<const float> x, float scale);

// x in rows of `cols`, blocks of `block` along each row (the last one of a row may be shorter),
// each at the MX scale 2^−k, k = mx_shared_exponent(f, block amax, rule), as the row-wise copy of a
// block-scaled point is quantized.
void add_range_fit_blocks(RangeFit& fit, const RangeThresholds& t, const format::Format& f, std::span<const float> x,
                          std::size_t cols, std::size_t block, MxScaleRule rule);

}  // namespace altgrad::quant
