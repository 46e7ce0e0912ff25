#include "data/utf8.hpp"

#include <cstdint>

namespace altgrad::data {
namespace {

bool is_continuation(std::uint8_t byte) { return (byte & 0xC0) == 0x80; }

// The allowed range of the second byte depends on the lead byte; this is where overlong forms,
// surrogates and code points above U+10FFFF are excluded (Unicode table 3-7).
struct SecondByteRange {
  std::uint8_t low, high;
  std::string_view reason_if_outside;
};

SecondByteRange second_byte_range(std::uint8_t lead) {
  if (lead == 0xE0) return {0xA0, 0xBF, "overlong encoding"};
  if (lead == 0xED) return {0x80, 0x9F, "surrogate code point"};
  if (lead == 0xF0) return {0x90, 0xBF, "overlong encoding"};
  if (lead == 0xF4) return {0x80, 0x8F, "code point above U+10FFFF"};
  return {0x80, 0xBF, "missing continuation byte"};
}

// Length of the sequence introduced by `lead`, or 0 when `lead` can never start one.
int sequence_length(std::uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

std::string_view bad_lead_reason(std::uint8_t lead) {
  if (is_continuation(lead)) return "unexpected continuation byte";
  if (lead == 0xC0 || lead == 0xC1) return "overlong encoding";
  return "byte that never appears in UTF-8 (code point above U+10FFFF)";
}

// Checks the sequence starting at `at`; returns its length, or a problem.
std::optional<Utf8Problem> check_sequence(std::string_view bytes, std::size_t at, int& length) {
  const auto lead = static_cast<std::uint8_t>(bytes[at]);
  length = sequence_length(lead);
  if (length == 0) return Utf8Problem{at, bad_lead_reason(lead)};
  for (int i = 1; i < length; ++i) {
    if (at + static_cast<std::size_t>(i) >= bytes.size()) return Utf8Problem{at, "truncated sequence at end of text"};
    const auto byte = static_cast<std::uint8_t>(bytes[at + static_cast<std::size_t>(i)]);
    if (i == 1) {
      const auto range = second_byte_range(lead);
      if (is_continuation(byte) && (byte < range.low || byte > range.high)) return Utf8Problem{at, range.reason_if_outside};
    }
    if (!is_continuation(byte)) return Utf8Problem{at, "truncated sequence (missing continuation byte)"};
  }
  return std::nullopt;
}

}  // namespace

std::optional<Utf8Problem> find_invalid_utf8(std::string_view bytes) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (static_cast<std::uint8_t>(bytes[at]) < 0x80) {  // ASCII fast path: most of a corpus
      ++at;
      continue;
    }
    int length = 0;
    if (auto problem = check_sequence(bytes, at, length)) return problem;
    at += static_cast<std::size_t>(length);
  }
  return std::nullopt;
}

}  // namespace altgrad::data
