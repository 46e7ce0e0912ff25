// UTF-8 validation: hand-picked edge cases from the Unicode standard's table 3-7, then every 1-, 2-
// and 3-byte string (and every code point) against a decoder written from the bit patterns.
#include "data/utf8.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

namespace {

using altgrad::data::find_invalid_utf8;

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (const int v : values) out += static_cast<char>(v);
  return out;
}

std::optional<std::size_t> invalid_at(const std::string& text) {
  const auto problem = find_invalid_utf8(text);
  return problem ? std::optional(problem->offset) : std::nullopt;
}

// Reference: decode by bit pattern (0xxxxxxx, 110xxxxx, 1110xxxx, 11110xxx, then 10xxxxxx
// continuations), then reject overlong forms, surrogates and values above U+10FFFF. Returns the
// offset of the first ill-formed sequence.
struct Lead {
  int length;
  std::uint32_t payload;
};

std::optional<Lead> reference_lead(std::uint8_t byte) {
  if ((byte & 0x80) == 0x00) return Lead{1, byte};
  if ((byte & 0xE0) == 0xC0) return Lead{2, byte & 0x1Fu};
  if ((byte & 0xF0) == 0xE0) return Lead{3, byte & 0x0Fu};
  if ((byte & 0xF8) == 0xF0) return Lead{4, byte & 0x07u};
  return std::nullopt;
}

std::optional<std::size_t> reference_invalid_at(const std::string& text) {
  constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};  // by length: below is overlong
  std::size_t at = 0;
  while (at < text.size()) {
    const auto lead = reference_lead(static_cast<std::uint8_t>(text[at]));
    if (!lead || at + static_cast<std::size_t>(lead->length) > text.size()) return at;
    std::uint32_t code = lead->payload;
    for (int i = 1; i < lead->length; ++i) {
      const auto next = static_cast<std::uint8_t>(text[at + static_cast<std::size_t>(i)]);
      if ((next & 0xC0) != 0x80) return at;
      code = (code << 6) | (next & 0x3Fu);
    }
    if (code < kSmallest[lead->length] || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return at;
    at += static_cast<std::size_t>(lead->length);
  }
  return std::nullopt;
}

// Reference encoder for a scalar value.
std::string encode(std::uint32_t code) {
  if (code < 0x80) return bytes({static_cast<int>(code)});
  if (code < 0x800) return bytes({static_cast<int>(0xC0 | (code >> 6)), static_cast<int>(0x80 | (code & 0x3F))});
  if (code < 0x10000) {
    return bytes({static_cast<int>(0xE0 | (code >> 12)), static_cast<int>(0x80 | ((code >> 6) & 0x3F)),
                  static_cast<int>(0x80 | (code & 0x3F))});
  }
  return bytes({static_cast<int>(0xF0 | (code >> 18)), static_cast<int>(0x80 | ((code >> 12) & 0x3F)),
                static_cast<int>(0x80 | ((code >> 6) & 0x3F)), static_cast<int>(0x80 | (code & 0x3F))});
}

TEST(Utf8, AcceptsAsciiAndMultibyteText) {
  EXPECT_EQ(invalid_at(""), std::nullopt);
  EXPECT_EQ(invalid_at("plain ASCII, with a NUL: " + bytes({0})), std::nullopt);
  EXPECT_EQ(invalid_at("h\xC3\xA9llo \xE2\x82\xAC \xF0\x9D\x84\x9E \xE4\xB8\xAD\xE6\x96\x87"), std::nullopt);  // é € 𝄞 中文
}

TEST(Utf8, AcceptsTheBoundariesOfEachLength) {
  for (const auto& text : {bytes({0x7F}), bytes({0xC2, 0x80}), bytes({0xDF, 0xBF}), bytes({0xE0, 0xA0, 0x80}),
                           bytes({0xED, 0x9F, 0xBF}), bytes({0xEE, 0x80, 0x80}), bytes({0xEF, 0xBF, 0xBF}),
                           bytes({0xF0, 0x90, 0x80, 0x80}), bytes({0xF4, 0x8F, 0xBF, 0xBF})}) {
    EXPECT_EQ(invalid_at(text), std::nullopt) << "bytes of length " << text.size();
  }
}

TEST(Utf8, RejectsOverlongEncodings) {
  EXPECT_EQ(invalid_at(bytes({0xC0, 0x80})), 0u);               // U+0000 in two bytes
  EXPECT_EQ(invalid_at("ab" + bytes({0xC1, 0xBF})), 2u);        // U+007F in two bytes
  EXPECT_EQ(invalid_at(bytes({0xE0, 0x9F, 0xBF})), 0u);         // U+07FF in three bytes
  EXPECT_EQ(invalid_at(bytes({0xF0, 0x8F, 0xBF, 0xBF})), 0u);   // U+FFFF in four bytes
  const auto problem = find_invalid_utf8(bytes({0xE0, 0x80, 0xAF}));
  ASSERT_TRUE(problem);
  EXPECT_NE(std::string(problem->reason).find("overlong"), std::string::npos) << problem->reason;
}

TEST(Utf8, RejectsSurrogatesAndCodePointsAboveTheMaximum) {
  EXPECT_EQ(invalid_at("x" + bytes({0xED, 0xA0, 0x80})), 1u);  // U+D800
  EXPECT_EQ(invalid_at(bytes({0xED, 0xBF, 0xBF})), 0u);        // U+DFFF
  const auto surrogate = find_invalid_utf8(bytes({0xED, 0xB0, 0x80}));
  ASSERT_TRUE(surrogate);
  EXPECT_NE(std::string(surrogate->reason).find("surrogate"), std::string::npos) << surrogate->reason;
  EXPECT_EQ(invalid_at(bytes({0xF4, 0x90, 0x80, 0x80})), 0u);  // U+110000
  EXPECT_EQ(invalid_at(bytes({0xF5, 0x80, 0x80, 0x80})), 0u);
  EXPECT_EQ(invalid_at(bytes({0xFF})), 0u);
}

TEST(Utf8, RejectsStrayContinuationAndTruncatedSequences) {
  EXPECT_EQ(invalid_at(bytes({'a', 0x80})), 1u);
  EXPECT_EQ(invalid_at("abc" + bytes({0xC3})), 3u);                  // cut at the end
  EXPECT_EQ(invalid_at("ab" + bytes({0xE2, 0x82})), 2u);
  EXPECT_EQ(invalid_at(bytes({0xF0, 0x9F, 0x98})), 0u);
  EXPECT_EQ(invalid_at(bytes({0xE2, 0x82, 'A', 'B'})), 0u);          // cut in the middle
  EXPECT_EQ(invalid_at("\xC3\xA9" + bytes({0xC3, ' '})), 2u);
  const auto truncated = find_invalid_utf8(bytes({'a', 0xE2, 0x82}));
  ASSERT_TRUE(truncated);
  EXPECT_NE(std::string(truncated->reason).find("truncated"), std::string::npos) << truncated->reason;
}

TEST(Utf8, AcceptsEveryScalarValueAndRejectsEverySurrogate) {
  std::string all;
  for (std::uint32_t code = 0; code <= 0x10FFFF; ++code) {
    if (code >= 0xD800 && code <= 0xDFFF) {
      ASSERT_EQ(invalid_at("ok" + encode(code)), 2u) << std::hex << code;
    } else {
      all += encode(code);
    }
  }
  EXPECT_EQ(invalid_at(all), std::nullopt);
}

TEST(Utf8, AgreesWithTheReferenceOnEveryShortString) {
  for (int a = 0; a < 256; ++a) {
    const std::string one = bytes({a});
    ASSERT_EQ(invalid_at(one), reference_invalid_at(one)) << a;
    for (int b = 0; b < 256; ++b) {
      const std::string two = bytes({a, b});
      ASSERT_EQ(invalid_at(two), reference_invalid_at(two)) << a << ' ' << b;
    }
  }
  // Three bytes: every lead and second byte (where the rules differ); for the third, only whether
  // it is a continuation byte matters, so its boundaries stand for the rest.
  for (int a = 0xC0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (const int c : {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF}) {
        const std::string three = bytes({a, b, c});
        ASSERT_EQ(invalid_at(three), reference_invalid_at(three)) << a << ' ' << b << ' ' << c;
      }
    }
  }
}

TEST(Utf8, AgreesWithTheReferenceOnFourByteLeads) {
  for (int a = 0xF0; a <= 0xF7; ++a) {
    for (int b = 0x70; b < 0xD0; ++b) {
      for (const int c : {0x41, 0x80, 0xBF, 0xC0}) {
        for (const int d : {0x41, 0x80, 0xBF, 0xC0}) {
          const std::string four = bytes({a, b, c, d});
          ASSERT_EQ(invalid_at(four), reference_invalid_at(four)) << a << ' ' << b << ' ' << c << ' ' << d;
        }
      }
    }
  }
}

}  // namespace
