#pragma once
// How much of a format's grid a quantized tensor actually uses: a format that spends most of its
// codes on values the tensor never takes wastes its bits (or the scale is off).
//
// Input: a per-code histogram, counts indexed by code, as quant::QuantizeOptions::code_histogram
// fills it (size = the format's code count, 2^width).
//   total    = the format's codes that are not NaN (format::is_nan_code) and not disabled
//              subnormals (format::is_valid_code; only formats run without subnormals have them,
//              and the quantizer never produces them). Every other code counts separately, as the
//              format distinguishes it: −0 and +0 are two codes where the format has −0, and ±Inf
//              are codes where the format has Inf.
//   used     = how many of those codes have a count ≥ 1 (hits on NaN codes are not counted)
//   fraction = used / total
// Examples: e4m3 (fn) has 256 codes, of which 0x7F and 0xFF are NaN: total 254. e5m2 (ieee) has
// 256 codes, of which 0x7D–0x7F and 0xFD–0xFF are NaN: total 250, ±Inf (0x7C, 0xFC) included.
#include <cstdint>
#include <span>

#include "format/spec.hpp"

namespace altgrad::diag {

struct CodeUsage {
  std::uint32_t used = 0;
  std::uint32_t total = 0;
  double fraction = 0;  // used / total; 0 when total is 0
};

// Throws std::invalid_argument when histogram.size() is not the format's code count.
CodeUsage code_usage(std::span<const std::uint64_t> histogram, const format::Format& f);

}  // namespace altgrad::diag
