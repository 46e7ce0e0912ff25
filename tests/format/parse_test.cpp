// Format names: the named formats, the grammar e<E>m<M>[fn|fnuz|fnu] with its options, the
// round trip through format_name(), and errors that name the problem and list the valid forms.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "format/parse.hpp"
#include "format/spec.hpp"
#include "mismatch_log.hpp"
#include "reference_grid.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

using format::FormatSpec;
using format::Overflow;
using format::SpecialPolicy;

TEST(NamedFormats, ListsTheFourteenDocumentedNamesInTableOrder) {
  const auto named = format::named_formats();
  const auto& expected = named_format_cases();
  ASSERT_EQ(named.size(), expected.size());
  for (std::size_t i = 0; i < named.size(); ++i) {
    EXPECT_EQ(named[i].name, expected[i].name);
    EXPECT_EQ(named[i].spec, expected[i].spec) << expected[i].name;
    EXPECT_FALSE(named[i].note.empty()) << expected[i].name;
  }
}

TEST(ParseFormat, EveryFormatUnderTestParsesToItsLiteralSpec) {
  for (const FormatCase& c : all_format_cases()) {
    EXPECT_EQ(format::parse_format(c.name), c.spec) << c.name;
  }
}

struct GrammarCase {
  std::string_view text;
  FormatSpec spec;
};

TEST(ParseFormat, GrammarAndOptionsGiveTheSpecifiedSpec) {
  const GrammarCase cases[] = {
      {"e4m3fn", {4, 3, 7, SpecialPolicy::fn, true, Overflow::saturate}},     // = e4m3
      {"e2m5fn", {2, 5, 1, SpecialPolicy::fn, true, Overflow::saturate}},     // = e2m5
      {"e8m7", {8, 7, 127, SpecialPolicy::ieee, true, Overflow::saturate}},   // = bf16
      {"e5m10", {5, 10, 15, SpecialPolicy::ieee, true, Overflow::saturate}},  // = fp16
      {"e2m1fn", {2, 1, 1, SpecialPolicy::fn, true, Overflow::saturate}},     // suffix over the name's policy
      {"e8m0fn", {8, 0, 127, SpecialPolicy::fn, true, Overflow::saturate}},
      {"e5m2,bias=148,subnormals=off",
       {5, 2, 148, SpecialPolicy::ieee, false, Overflow::saturate}},                    // (4 + m) * 2^-149
      {"e8m0fnu,bias=149", {8, 0, 149, SpecialPolicy::fnu, true, Overflow::saturate}},  // 2^-149 .. 2^105
      {"e1m1fn", {1, 1, 0, SpecialPolicy::fn, true, Overflow::saturate}},        // smallest fn: {0, 1, 2}
      {"e1m14fn", {1, 14, 0, SpecialPolicy::fn, true, Overflow::saturate}},      // 16 bits
      {"e8m7fnuz", {8, 7, 128, SpecialPolicy::fnuz, true, Overflow::saturate}},  // 16 bits, bias 2^(E-1)
      {"e5m2,subnormals=on", {5, 2, 15, SpecialPolicy::ieee, true, Overflow::saturate}},
      {"e5m2,overflow=saturate", {5, 2, 15, SpecialPolicy::ieee, true, Overflow::saturate}},
      {"e3m3,policy=fnuz", {3, 3, 4, SpecialPolicy::fnuz, true, Overflow::saturate}},  // default bias follows
      {"e3m3,policy=fnuz,bias=3", {3, 3, 3, SpecialPolicy::fnuz, true, Overflow::saturate}},
      {"e3m3,bias=3,policy=fnuz", {3, 3, 3, SpecialPolicy::fnuz, true, Overflow::saturate}},
      {"e4m3fnuz,policy=fn", {4, 3, 7, SpecialPolicy::fn, true, Overflow::saturate}},
      {"e4m3,bias=8,subnormals=off,overflow=inf", {4, 3, 8, SpecialPolicy::fn, false, Overflow::special}},
  };
  for (const GrammarCase& c : cases) {
    EXPECT_EQ(format::parse_format(c.text), c.spec) << c.text;
  }
}

// The shortest name of a named spec is the name itself.
TEST(FormatName, NamedSpecsPrintAsTheirNames) {
  for (const FormatCase& c : named_format_cases()) EXPECT_EQ(format::format_name(c.spec), c.name);
}

TEST(FormatName, RoundTripsEveryFormatUnderTest) {
  for (const FormatCase& c : all_format_cases()) {
    const FormatSpec parsed = format::parse_format(c.name);
    EXPECT_EQ(format::parse_format(format::format_name(parsed)), parsed)
        << c.name << " -> " << format::format_name(parsed);
  }
}

// Validity from first principles: the grammar's limits, fnu exponent-only, an ieee format needs a
// NaN code (mantissa >= 1) and a binade below the Inf/NaN exponent (E >= 2), at least one positive
// value, and every value exactly a float32.
bool valid_by_reference(const FormatSpec& s) {
  const int E = s.exponent_bits, M = s.mantissa_bits;
  const int width = E + M + (s.policy == SpecialPolicy::fnu ? 0 : 1);
  if (E < 1 || E > 8 || M < 0 || width > 16) return false;
  if (s.policy == SpecialPolicy::fnu && M != 0) return false;
  if (s.policy == SpecialPolicy::ieee && (E < 2 || M < 1)) return false;
  const format_ref::ReferenceGrid grid(s);
  return grid.has_positive_value() && grid.fits_float32();
}

// The default bias of docs/formats.md's policy table: 2^(E-1) - 1, and 2^(E-1) for fnuz.
int documented_default_bias(int E, SpecialPolicy p) {
  return (1 << (E - 1)) - (p == SpecialPolicy::fnuz ? 0 : 1);
}

struct SweepEntry {
  FormatSpec spec;
  bool valid;  // by the reference
};

// Every E, M and policy up to 11 bits (grids small enough to enumerate quickly) with the default
// bias and biases at the edges of float32, plus the 16/17-bit shapes at their default bias.
const std::vector<SweepEntry>& spec_sweep() {
  static const std::vector<SweepEntry> sweep = [] {
    std::vector<FormatSpec> specs;
    for (SpecialPolicy p : {SpecialPolicy::ieee, SpecialPolicy::fn, SpecialPolicy::fnuz,
                            SpecialPolicy::finite, SpecialPolicy::fnu}) {
      for (int E = 1; E <= 8; ++E) {
        for (int M = 0; E + M <= 10; ++M) {
          for (bool sub : {true, false}) {
            for (Overflow o : {Overflow::saturate, Overflow::special})
              specs.push_back({E, M, documented_default_bias(E, p), p, sub, o});
            for (int bias : {-130, -97, 148, 149, 150})
              specs.push_back({E, M, bias, p, sub, Overflow::saturate});
          }
        }
        for (int M : {15 - E, 16 - E, 17 - E})
          specs.push_back({E, M, documented_default_bias(E, p), p, true, Overflow::saturate});
      }
    }
    std::vector<SweepEntry> entries;
    for (const FormatSpec& s : specs) entries.push_back({s, valid_by_reference(s)});
    return entries;
  }();
  return sweep;
}

std::string spec_text(const FormatSpec& s) {
  return "E=" + std::to_string(s.exponent_bits) + " M=" + std::to_string(s.mantissa_bits) +
         " bias=" + std::to_string(s.bias) + " policy=" + std::string(format::policy_name(s.policy)) +
         " subnormals=" + (s.subnormals ? "on" : "off") +
         (s.overflow == Overflow::special ? " overflow=inf" : "");
}

// validation_error() accepts exactly the specs the reference finds valid; `subnormals` picks which
// half of the sweep (a subnormals=off spec has the same float32 constraint as subnormals=on).
void expect_validation_matches(bool subnormals) {
  MismatchLog log(std::string("validation_error, subnormals=") + (subnormals ? "on" : "off"));
  for (const auto& [s, valid] : spec_sweep()) {
    if (s.subnormals != subnormals) continue;
    const std::string why = format::validation_error(s);
    if (why.empty() != valid) {
      log.add(spec_text(s) + (why.empty()
                                  ? ": accepted, but a value is not a float32 or the spec is malformed"
                                  : ": rejected (" + why + ") but valid"));
    }
  }
}

TEST(Validation, AgreesWithTheReferenceWithSubnormalsOn) { expect_validation_matches(true); }

TEST(Validation, AgreesWithTheReferenceWithSubnormalsOff) { expect_validation_matches(false); }

TEST(FormatName, EveryValidSpecOfTheSweepRoundTripsThroughItsName) {
  MismatchLog log("format_name round trip");
  int round_tripped = 0;
  for (const auto& [s, valid] : spec_sweep()) {
    if (!valid || !format::validation_error(s).empty()) continue;
    ++round_tripped;
    const std::string name = format::format_name(s);
    try {
      if (format::parse_format(name) != s) log.add(spec_text(s) + " named '" + name + "' parses differently");
    } catch (const format::FormatError& e) {
      log.add(spec_text(s) + " named '" + name + "' does not parse: " + e.what());
    }
  }
  EXPECT_GT(round_tripped, 1000);
}

struct InvalidCase {
  std::string_view text;
  std::string_view problem;  // what the message must mention to say what is wrong
};

void expect_format_error(const InvalidCase& c) {
  try {
    const FormatSpec s = format::parse_format(c.text);
    ADD_FAILURE() << "'" << c.text << "' parsed as " << spec_text(s);
  } catch (const format::FormatError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(c.problem), std::string::npos) << "'" << c.text << "': " << what;
    EXPECT_NE(what.find("e<E>m<M>[fn|fnuz|fnu]"), std::string::npos) << what;
    for (std::string_view form : {"bias=", "subnormals=", "overflow=", "policy=", "e8m0fnu", "fp16"}) {
      EXPECT_NE(what.find(form), std::string::npos)
          << "'" << c.text << "' message lacks " << form << ": " << what;
    }
  }
}

TEST(ParseFormat, InvalidNamesThrowAnErrorNamingTheProblemAndTheValidForms) {
  const InvalidCase cases[] = {
      {"", ""},            // nothing to quote: the valid forms must still be listed
      {"e9m1", "e9m1"},    // E > 8
      {"e0m3", "e0m3"},    // E < 1
      {"e4m3x", "e4m3x"},  // unknown suffix
      {"e4m3fnuzz", "e4m3fnuzz"},
      {"e4m3finite", "e4m3finite"},  // finite is a policy= value, not a suffix
      {"e4m", "e4m"},
      {"em3", "em3"},
      {"e4m3 ", "e4m3 "},
      {"E4M3", "E4M3"},
      {"e4m12", "17"},  // 1 + 4 + 12 = 17 bits, more than 16
      {"e8m8", "17"},
      {"e1m15fn", "17"},
      {"e8m1fnu", "mantissa"},  // fnu is exponent-only
      {"e1m0fn", "e1m0fn"},     // codes: ±0 and NaN, no positive value
      {"e5m0", "ieee"},         // ieee needs a mantissa bit for its NaN codes
      {"e1m3", "ieee"},         // ieee needs a binade below the Inf/NaN exponent
      {"e4m3,bias=abc", "abc"},
      {"e4m3,bias=", "bias"},
      {"e4m3,bias=7.5", "7.5"},
      {"e4m3,foo=1", "foo"},
      {"e4m3,bias", "bias"},
      {"e4m3,", "e4m3,"},
      {"e4m3,subnormals=maybe", "maybe"},
      {"e4m3,overflow=nan", "nan"},
      {"e4m3,policy=ocp", "ocp"},
      {"e4m3,bias=200", "float32"},     // values far below 2^-149
      {"e4m3,bias=-120", "float32"},    // max 1.75 * 2^135
      {"e5m2,bias=150", "float32"},     // min subnormal 2^-151
      {"bf16,bias=126", "float32"},     // max (2 - 2^-7) * 2^128
      {"e8m0fnu,bias=126", "float32"},  // max 2^128
      {"e8m0fnu,bias=150", "float32"},  // min 2^-150
  };
  for (const InvalidCase& c : cases) expect_format_error(c);
}

// Found by fuzz/format_name_fuzzer.cpp (fuzz/corpus/format_name/regress_*).
TEST(ParseFormat, ExtremeBiasesAreRejectedWithoutOverflow) {
  expect_format_error({"e4m3,bias=-2147483648", "float32"});
  expect_format_error({"e4m3,bias=2147483647", "float32"});
}

TEST(ParseFormat, UnprintableBytesAreQuotedAsHexEscapes) {
  const std::string name("e4m3,bias=\0\x01\xff", 13);
  try {
    format::parse_format(name);
    ADD_FAILURE() << "accepted a name with a NUL byte";
  } catch (const format::FormatError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("invalid format 'e4m3,bias=\\x00\\x01\\xff': ", 0), 0u) << what;
  }
}

// Without subnormals the smallest binade still steps by 2^(emin - M): for e5m2 with bias 149 or
// 150 its values (1 + m/4) * 2^(1 - bias) are not float32 values, so these biases leave float32
// with subnormals off just as with them on ("any bias that keeps every value inside float32").
TEST(ParseFormat, BiasesThatLeaveFloat32WithSubnormalsOffAreRejected) {
  expect_format_error({"e5m2,bias=150,subnormals=off", "float32"});
  expect_format_error({"e5m2,bias=149,subnormals=off", "float32"});
}

}  // namespace
}  // namespace altgrad::format_test
