#pragma once
// An independent reference for a format's codes and values, written from the textbook definitions
// in docs/formats.md. It reads only the FormatSpec's fields (E, M, bias, policy, subnormals,
// overflow) and calls nothing in src/format (spec.hpp is included for the FormatSpec type), so the
// tests compare the implementation against numbers derived from first principles. Values are long
// double (64-bit significand), which holds every float32 and every midpoint of two of them exactly.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "format/spec.hpp"

namespace altgrad::format_ref {

enum class CodeKind {
  number,              // a finite value the format can produce
  disabled_subnormal,  // exponent field 0, mantissa != 0, subnormals off: reads as ±0, never produced
  infinity,
  nan,
};

struct RefCode {
  std::uint32_t code = 0;
  CodeKind kind = CodeKind::number;
  bool negative = false;  // sign bit set (never for unsigned formats)
  long double value = 0;  // signed value: ±0, ±inf, NaN for NaN codes
};

// One value of the rounding grid: the finite values extended upward with the same grid by one
// value on each side (±`beyond`), so rounding can tell "rounded past max finite" apart.
struct GridPoint {
  long double value = 0;
  std::uint32_t code = 0;   // code of the value (the magnitude code + 1 for the beyond points)
  bool odd = false;         // the code is odd: what ties-to-even and round-to-odd look at
  bool beyond_max = false;  // ±(max finite + top step): exists only on the extended grid
};

class ReferenceGrid {
 public:
  explicit ReferenceGrid(const format::FormatSpec& spec);

  const format::FormatSpec& spec() const { return spec_; }
  bool is_signed() const { return spec_.policy != format::SpecialPolicy::fnu; }
  bool has_inf() const { return spec_.policy == format::SpecialPolicy::ieee; }
  bool has_nan() const { return spec_.policy != format::SpecialPolicy::finite; }
  bool has_zero() const { return spec_.policy != format::SpecialPolicy::fnu; }
  bool has_negative_zero() const { return is_signed() && spec_.policy != format::SpecialPolicy::fnuz; }
  int width() const;
  std::uint32_t sign_code() const {
    return is_signed() ? 1u << (spec_.exponent_bits + spec_.mantissa_bits) : 0u;
  }

  // Every code, indexed by the code.
  const std::vector<RefCode>& codes() const { return codes_; }
  // Distinct finite values the format can produce, ascending, ±0 counted once.
  const std::vector<long double>& finite_values() const { return finite_values_; }
  // The rounding grid, ascending: -beyond, the finite values, +beyond. For fnu it starts at a zero
  // the format lacks: results that round there clamp to 2^-bias (docs/formats.md).
  const std::vector<GridPoint>& rounding_points() const { return points_; }
  // Same values as double, for fast brute-force scans (every point is exact in double).
  const std::vector<double>& rounding_point_values() const { return point_values_; }

  long double max_finite() const { return max_finite_; }
  long double min_normal() const { return min_normal_; }
  long double min_subnormal() const { return min_subnormal_; }  // 0 when there are none
  long double min_positive() const { return min_subnormal_ > 0 ? min_subnormal_ : min_normal_; }
  long double beyond_max() const { return beyond_max_; }  // next value of the extended grid
  long double top_step() const { return beyond_max_ - max_finite_; }
  std::uint32_t max_finite_code() const { return max_finite_code_; }
  // The canonical NaN the spec's special-input table names; none for `finite`.
  std::optional<std::uint32_t> canonical_nan_code() const;
  std::optional<std::uint32_t> inf_code(bool negative) const;
  int nan_code_count() const;
  // Every value is exactly a float32 (subnormal float32 included).
  bool fits_float32() const;
  bool has_positive_value() const { return max_finite_ > 0; }

  // The code the format stores for a finite value (negative zero gives -0 or +0 per the policy).
  std::uint32_t code_of_value(long double value, bool negative_zero) const;

 private:
  RefCode classify(std::uint32_t code) const;
  void collect_finite_values();
  void find_extremes();
  long double magnitude_value(std::uint32_t field, std::uint32_t fraction) const;
  void build_rounding_points();

  format::FormatSpec spec_;
  std::vector<RefCode> codes_;
  std::vector<long double> finite_values_;
  std::vector<std::pair<long double, std::uint32_t>> positives_;  // positive values and codes, ascending
  std::vector<GridPoint> points_;
  std::vector<double> point_values_;
  long double max_finite_ = 0, min_normal_ = 0, min_subnormal_ = 0, beyond_max_ = 0;
  std::uint32_t max_finite_code_ = 0;
};

// Which grid points bracket x: lo <= x <= hi, adjacent in rounding_points(); lo == hi when x is a
// point. `outside` when x lies beyond +beyond or below -beyond: every rounding overflows then.
struct Bracket {
  std::size_t lo = 0, hi = 0;
  bool outside = false;
};

// Brute force: counts the points <= x (the scan the random-input test relies on).
Bracket bracket_by_scan(const ReferenceGrid& grid, float x);
// Binary search over the sorted points (for the 16-bit formats).
Bracket bracket_by_search(const ReferenceGrid& grid, float x);

}  // namespace altgrad::format_ref
