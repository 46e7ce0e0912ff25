#pragma once
// The formats and rounding modes every format test runs over, and the sample sizes.
//
// Each format is written out as a FormatSpec literal from docs/formats.md rather than obtained from
// parse_format(), so a parser bug cannot silently change what the other tests check (parse_test.cpp
// checks that the names parse to these literals).
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "format/rounding.hpp"
#include "format/spec.hpp"

namespace altgrad::format_test {

struct FormatCase {
  std::string_view name;  // the name parse_format() accepts
  format::FormatSpec spec;
};

inline void PrintTo(const FormatCase& c, std::ostream* os) { *os << c.name; }

// The 14 named formats of docs/formats.md, in the order of its table.
const std::vector<FormatCase>& named_format_cases();
// Grammar formats and options: other widths, biases, subnormals off, overflow=inf, policy=.
const std::vector<FormatCase>& generic_format_cases();
const std::vector<FormatCase>& all_format_cases();
// The spec of the case with this name (one of all_format_cases()); throws if there is none.
const format::FormatSpec& spec_named(std::string_view name);

// The cases whose spec satisfies `pred`, for tests that only apply to some formats.
std::vector<FormatCase> format_cases_where(bool (*pred)(const format::FormatSpec&));

// The documented condition for the quantizer's fast paths (has_simple_grid()): signed, with zero
// and subnormals, and a min normal that float32 holds as a normal. Decided from the reference.
bool simple_grid_applies(const format::FormatSpec& spec);

// The modes with a deterministic result (all of kAllRoundings but the stochastic ones).
std::vector<format::Rounding> deterministic_roundings();
std::string_view rounding_label(format::Rounding mode);

// A gtest parameter name for a format name ("e4m3,bias=9" -> "e4m3_bias_9").
std::string param_name(std::string_view format_name);

// Names the instances of a test suite parameterized by FormatCase.
struct FormatCaseName {
  std::string operator()(const ::testing::TestParamInfo<FormatCase>& param) const {
    return param_name(param.param.name);
  }
};

// Random inputs per format and mode: at least 10^6 in Release; fewer in the (sanitized) Debug build,
// where the same code paths run 5-30x slower.
#ifdef NDEBUG
inline constexpr std::size_t kRandomInputsPerFormat = std::size_t{1} << 20;
#else
inline constexpr std::size_t kRandomInputsPerFormat = std::size_t{1} << 17;
#endif

}  // namespace altgrad::format_test
