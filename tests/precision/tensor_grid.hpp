#pragma once
// The grid values Q(x·s) and the scale s of a per-tensor current-scaled operand, computed in the
// test from the definition (docs/formats.md, "Scaling"): s = max_finite / amax, rounded once to
// FP32, and each value rounded to the format, nearest even. What a tensor core multiplies.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"

namespace altgrad::precision_test {

struct Grid {
  std::vector<float> values;
  float scale;
};

inline Grid grid_of(const std::vector<float>& x, const char* format_name = "e4m3") {
  const format::Format f = format::make_format(format::parse_format(format_name));
  float amax = 0;
  for (const float v : x) amax = std::max(amax, std::fabs(v));
  Grid g{std::vector<float>(x.size()), static_cast<float>(static_cast<double>(f.max_finite()) / amax)};
  for (std::size_t i = 0; i < x.size(); ++i) {
    g.values[i] = format::decode(f, format::encode(f, format::Rounding::nearest_even, x[i] * g.scale));
  }
  return g;
}

}  // namespace altgrad::precision_test
