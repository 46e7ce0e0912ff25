#include "test_cases.hpp"

#include <cctype>
#include <cmath>
#include <stdexcept>

#include "reference_grid.hpp"

namespace altgrad::format_test {
namespace {

using format::FormatSpec;
using format::Overflow;
using format::SpecialPolicy;

constexpr auto kIeee = SpecialPolicy::ieee;
constexpr auto kFn = SpecialPolicy::fn;
constexpr auto kFnuz = SpecialPolicy::fnuz;
constexpr auto kFinite = SpecialPolicy::finite;
constexpr auto kFnu = SpecialPolicy::fnu;
constexpr auto kSat = Overflow::saturate;
constexpr auto kInf = Overflow::special;

}  // namespace

const std::vector<FormatCase>& named_format_cases() {
  // {E, M, bias, policy, subnormals, overflow}; biases from the docs' table.
  static const std::vector<FormatCase> cases = {
      {"e4m3", FormatSpec{4, 3, 7, kFn, true, kSat}},
      {"e4m3fnuz", FormatSpec{4, 3, 8, kFnuz, true, kSat}},
      {"e5m2", FormatSpec{5, 2, 15, kIeee, true, kSat}},
      {"e5m2fnuz", FormatSpec{5, 2, 16, kFnuz, true, kSat}},
      {"e3m4", FormatSpec{3, 4, 3, kIeee, true, kSat}},
      {"e2m5", FormatSpec{2, 5, 1, kFn, true, kSat}},
      {"e1m6", FormatSpec{1, 6, 0, kFn, true, kSat}},
      {"e7m0", FormatSpec{7, 0, 63, kFn, true, kSat}},
      {"e8m0fnu", FormatSpec{8, 0, 127, kFnu, true, kSat}},
      {"e2m3", FormatSpec{2, 3, 1, kFinite, true, kSat}},
      {"e3m2", FormatSpec{3, 2, 3, kFinite, true, kSat}},
      {"e2m1", FormatSpec{2, 1, 1, kFinite, true, kSat}},
      {"bf16", FormatSpec{8, 7, 127, kIeee, true, kSat}},
      {"fp16", FormatSpec{5, 10, 15, kIeee, true, kSat}},
  };
  return cases;
}

const std::vector<FormatCase>& generic_format_cases() {
  static const std::vector<FormatCase> cases = {
      {"e3m3", FormatSpec{3, 3, 3, kIeee, true, kSat}},
      {"e5m3fn", FormatSpec{5, 3, 15, kFn, true, kSat}},
      {"e6m1fnuz", FormatSpec{6, 1, 32, kFnuz, true, kSat}},
      {"e6m0fnu", FormatSpec{6, 0, 31, kFnu, true, kSat}},
      {"e2m2fn", FormatSpec{2, 2, 1, kFn, true, kSat}},
      {"e4m3,bias=9", FormatSpec{4, 3, 9, kFn, true, kSat}},
      {"e4m3,bias=-100", FormatSpec{4, 3, -100, kFn, true, kSat}},  // values up to 2^115
      {"e5m2,bias=140", FormatSpec{5, 2, 140, kIeee, true, kSat}},  // every value a float32 subnormal
      {"e5m2,bias=-97", FormatSpec{5, 2, -97, kIeee, true, kSat}},  // max 1.75*2^127, next 2^128
      // Grids whose finest step is float32's, 2^-149: inputs there are already on the grid.
      {"e5m2,bias=148", FormatSpec{5, 2, 148, kIeee, true, kSat}},
      {"e1m1fnuz,bias=149", FormatSpec{1, 1, 149, kFnuz, true, kSat}},
      {"e8m0fnu,bias=149", FormatSpec{8, 0, 149, kFnu, true, kSat}},
      {"e5m2,subnormals=off", FormatSpec{5, 2, 15, kIeee, false, kSat}},
      {"e4m3fnuz,subnormals=off", FormatSpec{4, 3, 8, kFnuz, false, kSat}},
      {"e3m2,subnormals=off", FormatSpec{3, 2, 3, kFinite, false, kSat}},
      {"e4m3fn,overflow=inf", FormatSpec{4, 3, 7, kFn, true, kInf}},  // no Inf: NaN
      {"e5m2,overflow=inf", FormatSpec{5, 2, 15, kIeee, true, kInf}},
      {"e2m1,overflow=inf", FormatSpec{2, 1, 1, kFinite, true, kInf}},  // no NaN: saturates
      {"e7m0,overflow=inf", FormatSpec{7, 0, 63, kFn, true, kInf}},
      {"e8m0fnu,overflow=inf", FormatSpec{8, 0, 127, kFnu, true, kInf}},
      {"e3m3,policy=finite", FormatSpec{3, 3, 3, kFinite, true, kSat}},
      {"e3m4,policy=fnuz,subnormals=off,overflow=inf", FormatSpec{3, 4, 4, kFnuz, false, kInf}},
  };
  return cases;
}

const std::vector<FormatCase>& all_format_cases() {
  static const std::vector<FormatCase> all = [] {
    std::vector<FormatCase> v = named_format_cases();
    const auto& generic = generic_format_cases();
    v.insert(v.end(), generic.begin(), generic.end());
    return v;
  }();
  return all;
}

const format::FormatSpec& spec_named(std::string_view name) {
  for (const FormatCase& c : all_format_cases()) {
    if (c.name == name) return c.spec;
  }
  throw std::out_of_range("no format case named " + std::string(name));
}

std::vector<FormatCase> format_cases_where(bool (*pred)(const format::FormatSpec&)) {
  std::vector<FormatCase> out;
  for (const FormatCase& c : all_format_cases()) {
    if (pred(c.spec)) out.push_back(c);
  }
  return out;
}

bool simple_grid_applies(const format::FormatSpec& spec) {
  const format_ref::ReferenceGrid grid(spec);
  return grid.is_signed() && grid.has_zero() && spec.subnormals &&
         grid.min_normal() >= std::ldexp(1.0L, -126);
}

std::vector<format::Rounding> deterministic_roundings() {
  std::vector<format::Rounding> modes;
  for (format::Rounding r : format::kAllRoundings) {
    if (!format::is_stochastic(r)) modes.push_back(r);
  }
  return modes;
}

std::string_view rounding_label(format::Rounding mode) {
  switch (mode) {
    case format::Rounding::nearest_even:
      return "nearest-even";
    case format::Rounding::nearest_away:
      return "nearest-away";
    case format::Rounding::toward_zero:
      return "toward-zero";
    case format::Rounding::toward_positive:
      return "up";
    case format::Rounding::toward_negative:
      return "down";
    case format::Rounding::odd:
      return "odd";
    case format::Rounding::stochastic:
      return "stochastic";
    case format::Rounding::stochastic_equal:
      return "stochastic-equal";
  }
  return "?";
}

std::string param_name(std::string_view format_name) {
  std::string out;
  for (char c : format_name) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return out;
}

}  // namespace altgrad::format_test
