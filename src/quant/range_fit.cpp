#include "quant/range_fit.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "quant/quantize.hpp"

namespace altgrad::quant {
namespace {

QuantStats quantize_one(const format::Format& f, float a) {
  float out = 0;
  return quantize(f, std::span<const float>(&a, 1), std::span<float>(&out, 1), QuantizeOptions{});
}

// The smallest positive finite float (by bits) for which `holds` is true, given that it is monotone
// (false below, true from there on); +Inf when it holds for none.
template <typename Predicate>
float first_where(Predicate holds) {
  std::uint32_t lo = 1, hi = 0x7F7FFFFFu;  // the smallest subnormal, the largest finite float
  if (!holds(std::bit_cast<float>(hi))) return std::numeric_limits<float>::infinity();
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (holds(std::bit_cast<float>(mid))) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return std::bit_cast<float>(lo);
}

// The finite values among x[0..n) at one scale, without branches so that the loop vectorizes (a
// diagnostic step fits every point's values); in pieces that 32-bit counts hold.
void count(RangeFit& fit, const RangeThresholds& t, const float* x, std::size_t n, float scale) {
  constexpr std::size_t kPiece = std::size_t{1} << 31;
  for (std::size_t begin = 0; begin < n; begin += kPiece) {
    const std::size_t end = std::min(n, begin + kPiece);
    std::uint32_t overflow = 0, flush = 0, subnormal = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const float magnitude = std::fabs(x[i]);
      const bool finite = magnitude <= std::numeric_limits<float>::max();  // false for NaN
      const float a = magnitude * scale;
      overflow += finite & (a >= t.overflow);
      flush += finite & (magnitude != 0) & (a <= t.flush);
      subnormal += finite & (a > t.flush) & (a < t.min_normal);
    }
    fit.overflow += overflow;
    fit.flush += flush;
    fit.subnormal += subnormal;
  }
}

}  // namespace

RangeThresholds range_thresholds(const format::Format& f) {
  RangeThresholds t;
  t.overflow = first_where([&](float a) { return quantize_one(f, a).overflow > 0; });
  const float kept = first_where([&](float a) { return quantize_one(f, a).underflow == 0; });
  t.flush = std::nextafter(kept, 0.0f);
  t.min_normal = f.min_normal();
  return t;
}

void RangeFit::merge(const RangeFit& o) {
  count += o.count;
  overflow += o.overflow;
  subnormal += o.subnormal;
  flush += o.flush;
}

void add_range_fit(RangeFit& fit, const RangeThresholds& t, std::span<const float> x, float scale) {
  fit.count += x.size();
  count(fit, t, x.data(), x.size(), scale);
}

void add_range_fit_blocks(RangeFit& fit, const RangeThresholds& t, const format::Format& f, std::span<const float> x,
                          std::size_t cols, std::size_t block, MxScaleRule rule) {
  fit.count += x.size();
  for (std::size_t row = 0; row + cols <= x.size(); row += cols) {
    for (std::size_t start = 0; start < cols; start += block) {
      const std::span<const float> b = x.subspan(row + start, std::min(block, cols - start));
      const float amax = finite_block_amax(b.data(), b.size());
      const float multiplier = rule == MxScaleRule::three_quarters ? kThreeQuarters : 1.0f;
      count(fit, t, b.data(), b.size(), std::ldexp(multiplier, -mx_shared_exponent(f, amax, rule)));
    }
  }
}

}  // namespace altgrad::quant
