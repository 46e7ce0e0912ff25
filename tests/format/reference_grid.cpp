#include "reference_grid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace altgrad::format_ref {

using format::SpecialPolicy;

ReferenceGrid::ReferenceGrid(const format::FormatSpec& spec) : spec_(spec) {
  const std::uint32_t count = 1u << width();
  codes_.reserve(count);
  for (std::uint32_t c = 0; c < count; ++c) codes_.push_back(classify(c));
  collect_finite_values();
  find_extremes();
  build_rounding_points();
}

void ReferenceGrid::collect_finite_values() {
  for (const RefCode& rc : codes_) {
    if (rc.kind == CodeKind::number)
      finite_values_.push_back(rc.value == 0 ? 0.0L : rc.value);  // one zero, +0
  }
  std::sort(finite_values_.begin(), finite_values_.end());
  finite_values_.erase(std::unique(finite_values_.begin(), finite_values_.end()), finite_values_.end());
}

// Max finite, min normal (exponent field >= 1, or any code for fnu), min subnormal, and the next
// value of the extended grid: max finite plus the top binade's step 2^(exponent of max - M).
void ReferenceGrid::find_extremes() {
  const int M = spec_.mantissa_bits;
  for (const RefCode& rc : codes_) {
    if (rc.kind != CodeKind::number || rc.negative || rc.value <= 0) continue;
    const bool subnormal = is_signed() && (rc.code >> M) == 0;
    long double& smallest = subnormal ? min_subnormal_ : min_normal_;
    if (smallest == 0 || rc.value < smallest) smallest = rc.value;
    if (rc.value > max_finite_) {
      max_finite_ = rc.value;
      max_finite_code_ = rc.code;
    }
  }
  if (max_finite_ == 0) return;  // no positive value: not a usable format
  const std::uint32_t top_field = max_finite_code_ >> M;
  const int top_exp = (top_field == 0 && is_signed() ? 1 : static_cast<int>(top_field)) - spec_.bias;
  beyond_max_ = max_finite_ + std::ldexp(1.0L, top_exp - M);
}

int ReferenceGrid::width() const { return spec_.exponent_bits + spec_.mantissa_bits + (is_signed() ? 1 : 0); }

// (1 + f/2^M) * 2^(e - bias) for a normal field, (f/2^M) * 2^(1 - bias) for field 0 of a signed
// format; fnu has no subnormals, so its field 0 is normal.
long double ReferenceGrid::magnitude_value(std::uint32_t field, std::uint32_t fraction) const {
  const long double f = std::ldexp(static_cast<long double>(fraction), -spec_.mantissa_bits);
  if (field == 0 && is_signed()) return std::ldexp(f, 1 - spec_.bias);
  return std::ldexp(1.0L + f, static_cast<int>(field) - spec_.bias);
}

RefCode ReferenceGrid::classify(std::uint32_t code) const {
  const int E = spec_.exponent_bits, M = spec_.mantissa_bits;
  const std::uint32_t magnitude_bits = static_cast<std::uint32_t>(E + M);
  const std::uint32_t magnitude = code & ((1u << magnitude_bits) - 1u);
  const std::uint32_t field = magnitude >> M;
  const std::uint32_t fraction = magnitude & ((1u << M) - 1u);
  const std::uint32_t top_field = (1u << E) - 1u;
  const bool all_ones = magnitude == (1u << magnitude_bits) - 1u;

  RefCode rc;
  rc.code = code;
  rc.negative = is_signed() && (code >> magnitude_bits) != 0;
  const long double sign = rc.negative ? -1.0L : 1.0L;
  const long double nan = std::numeric_limits<long double>::quiet_NaN();
  switch (spec_.policy) {
    case SpecialPolicy::ieee:
      if (field == top_field) {
        rc.kind = fraction == 0 ? CodeKind::infinity : CodeKind::nan;
        rc.value = fraction == 0 ? sign * std::numeric_limits<long double>::infinity() : nan;
        return rc;
      }
      break;
    case SpecialPolicy::fn:
    case SpecialPolicy::fnu:
      if (all_ones) {
        rc.kind = CodeKind::nan;
        rc.value = nan;
        return rc;
      }
      break;
    case SpecialPolicy::fnuz:
      if (rc.negative && magnitude == 0) {  // the -0 slot
        rc.kind = CodeKind::nan;
        rc.value = nan;
        return rc;
      }
      break;
    case SpecialPolicy::finite:
      break;
  }
  // "Subnormal codes decode as ±0 when met": the sign of the code, also in fnuz (whose -0 slot is NaN,
  // so such a -0 is never produced by encode, but the spec's ±0 is taken literally).
  if (is_signed() && !spec_.subnormals && field == 0 && fraction != 0) {
    rc.kind = CodeKind::disabled_subnormal;
    rc.value = sign * 0.0L;
    return rc;
  }
  rc.value = sign * magnitude_value(field, fraction);
  return rc;
}

void ReferenceGrid::build_rounding_points() {
  // Positive values with their codes, ascending (distinct: each positive code has its own value).
  for (const RefCode& rc : codes_) {
    if (rc.kind == CodeKind::number && !rc.negative && rc.value > 0)
      positives_.push_back({rc.value, rc.code});
  }
  std::sort(positives_.begin(), positives_.end());

  const std::uint32_t sign = sign_code();
  const std::uint32_t beyond_code = max_finite_code_ + 1;
  const auto point = [](long double v, std::uint32_t code, bool beyond = false) {
    return GridPoint{v, code, (code & 1u) != 0, beyond};
  };
  if (is_signed()) {
    points_.push_back(point(-beyond_max_, sign | beyond_code, true));
    for (auto it = positives_.rbegin(); it != positives_.rend(); ++it)
      points_.push_back(point(-it->first, sign | it->second));
  }
  // Zero; for fnu the zero it lacks, so that results below 2^-bias can round to it and then clamp.
  points_.push_back(point(0.0L, 0u));
  for (const auto& [value, code] : positives_) points_.push_back(point(value, code));
  points_.push_back(point(beyond_max_, beyond_code, true));
  for (const GridPoint& p : points_) point_values_.push_back(static_cast<double>(p.value));
}

std::uint32_t ReferenceGrid::code_of_value(long double value, bool negative_zero) const {
  if (value == 0 && has_zero()) return negative_zero && has_negative_zero() ? sign_code() : 0u;
  const long double magnitude = std::fabs(value);
  const auto it = std::lower_bound(positives_.begin(), positives_.end(),
                                   std::pair<long double, std::uint32_t>{magnitude, 0u});
  if (it == positives_.end() || it->first != magnitude)
    throw std::logic_error("reference: value is not on the grid");
  return it->second | (value < 0 ? sign_code() : 0u);
}

std::optional<std::uint32_t> ReferenceGrid::canonical_nan_code() const {
  const int E = spec_.exponent_bits, M = spec_.mantissa_bits;
  const std::uint32_t all_ones = (1u << (E + M)) - 1u;
  switch (spec_.policy) {
    case SpecialPolicy::ieee:  // 0 11..1 10..0; a valid ieee format has M >= 1
      if (M < 1) return std::nullopt;
      return (((1u << E) - 1u) << M) | (1u << (M - 1));
    case SpecialPolicy::fn:
    case SpecialPolicy::fnu:
      return all_ones;  // positive all-ones (0x7F for e4m3)
    case SpecialPolicy::fnuz:
      return sign_code();  // 100..0
    case SpecialPolicy::finite:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::uint32_t> ReferenceGrid::inf_code(bool negative) const {
  if (!has_inf()) return std::nullopt;
  const std::uint32_t magnitude = ((1u << spec_.exponent_bits) - 1u) << spec_.mantissa_bits;
  return magnitude | (negative ? sign_code() : 0u);
}

int ReferenceGrid::nan_code_count() const {
  return static_cast<int>(std::count_if(codes_.begin(), codes_.end(),
                                        [](const RefCode& rc) { return rc.kind == CodeKind::nan; }));
}

bool ReferenceGrid::fits_float32() const {
  for (long double v : finite_values_) {
    if (static_cast<long double>(static_cast<float>(v)) != v) return false;
  }
  return true;
}

Bracket bracket_by_scan(const ReferenceGrid& grid, float x) {
  const std::vector<double>& values = grid.rounding_point_values();
  std::size_t at_or_below = 0;
  for (double v : values) at_or_below += v <= x ? 1u : 0u;
  if (at_or_below == 0) return {0, 0, true};
  const std::size_t lo = at_or_below - 1;
  if (values[lo] == x) return {lo, lo, false};
  if (lo + 1 == values.size()) return {lo, lo, true};
  return {lo, lo + 1, false};
}

Bracket bracket_by_search(const ReferenceGrid& grid, float x) {
  const std::vector<double>& values = grid.rounding_point_values();
  const auto above = std::upper_bound(values.begin(), values.end(), static_cast<double>(x));
  const auto at_or_below = static_cast<std::size_t>(above - values.begin());
  if (at_or_below == 0) return {0, 0, true};
  const std::size_t lo = at_or_below - 1;
  if (values[lo] == x) return {lo, lo, false};
  if (lo + 1 == values.size()) return {lo, lo, true};
  return {lo, lo + 1, false};
}

}  // namespace altgrad::format_ref
