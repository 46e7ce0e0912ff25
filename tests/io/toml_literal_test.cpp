// TOML literals we write: shortest floats that read back exactly, strings escaped as TOML requires.
#include "io/toml_literal.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <toml++/toml.h>

namespace {

using altgrad::io::toml_float;
using altgrad::io::toml_string;

TEST(TomlLiteral, FloatsAreShortestAndAlwaysFloats) {
  EXPECT_EQ(toml_float(1.0), "1.0");
  EXPECT_EQ(toml_float(0.0), "0.0");
  EXPECT_EQ(toml_float(-2.0), "-2.0");
  EXPECT_EQ(toml_float(0.001), "0.001");
  EXPECT_EQ(toml_float(6e-4), "6e-04");  // to_chars picks the shorter of fixed and scientific
  EXPECT_EQ(toml_float(0.1), "0.1");
  EXPECT_EQ(toml_float(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(toml_float(std::nan("")), "nan");
}

TEST(TomlLiteral, FloatsReadBackExactlyThroughToml) {
  for (const double value : {1.0 / 3.0, 1e-7, 6e-4, 0.30000000000000004, 1e300, 5e-324, -123456.789, 1e16}) {
    const auto table = toml::parse("v = " + toml_float(value));
    ASSERT_TRUE(table["v"].is_floating_point()) << toml_float(value);
    EXPECT_EQ(table["v"].value<double>(), value) << toml_float(value);
  }
}

TEST(TomlLiteral, StringsReadBackExactlyThroughToml) {
  for (const std::string text : {"", "plain", "quote \" and backslash \\", "tab\tnewline\ncr\r", "bell\x07 del\x7F",
                                 "unicode é € 𝄞", "# not a comment", "'single'"}) {
    const std::string literal = toml_string(text);
    EXPECT_EQ(literal.find('\n'), std::string::npos) << literal;  // one line
    const auto table = toml::parse("v = " + literal);
    EXPECT_EQ(table["v"].value<std::string>(), text) << literal;
  }
}

}  // namespace
