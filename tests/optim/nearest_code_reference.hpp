#pragma once
// The write path's reference, by brute force: the nearest finite value of a format to y, found by
// enumerating every code with the codec's decode, ties to the value whose code is even, saturating
// (beyond max finite the nearest finite value is max finite). Distances in double, exactly.
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "format/codec.hpp"
#include "format/spec.hpp"

namespace altgrad::optim_test {

struct NearestCode {
  double value;
  std::uint32_t code;
};

inline NearestCode brute_force_nearest(const format::Format& f, double y) {
  NearestCode best{std::numeric_limits<double>::quiet_NaN(), 0};
  double best_distance = std::numeric_limits<double>::infinity();
  for (std::uint32_t c = 0; c < f.code_count(); ++c) {
    const float v = format::decode(f, c);
    if (!std::isfinite(v)) continue;
    if (format::is_disabled_subnormal(f, c)) continue;  // reads as ±0, which code 0 already is
    const double distance = std::fabs(static_cast<double>(v) - y);
    const bool tie = distance == best_distance && static_cast<double>(v) != best.value;
    if (distance < best_distance || (tie && (c & 1u) == 0)) {
      best = {v, c};
      best_distance = distance;
    }
  }
  return best;
}

// The same search over a table of every finite value, enumerated once and sorted, for formats of 16
// bits whose per-element search would dominate a test: the nearest is one of the two table entries
// around y.
class GridTable {
 public:
  explicit GridTable(const format::Format& f) {
    for (std::uint32_t c = 0; c < f.code_count(); ++c) {
      const float v = format::decode(f, c);
      if (std::isfinite(v) && !format::is_disabled_subnormal(f, c)) entries_.push_back({v, c});
    }
    std::sort(entries_.begin(), entries_.end(), [](const NearestCode& a, const NearestCode& b) {
      return a.value < b.value || (a.value == b.value && a.code < b.code);
    });
  }

  NearestCode nearest(double y) const {
    const auto above = std::lower_bound(entries_.begin(), entries_.end(), y,
                                        [](const NearestCode& e, double x) { return e.value < x; });
    if (above == entries_.begin()) return *above;
    if (above == entries_.end()) return entries_.back();
    const NearestCode& below = *(above - 1);
    const double down = y - below.value, up = above->value - y;
    if (down != up) return down < up ? below : *above;
    return (below.code & 1u) == 0 ? below : *above;
  }

 private:
  std::vector<NearestCode> entries_;
};

}  // namespace altgrad::optim_test
