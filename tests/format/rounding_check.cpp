#include "rounding_check.hpp"

#include <string>

#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

std::string flags_text(bool overflow, bool underflow) {
  return std::string(" overflow=") + (overflow ? "1" : "0") + " underflow=" + (underflow ? "1" : "0");
}

}  // namespace

void check_rounding(const format::Format& f, std::string_view format_name, format::Rounding mode, float x,
                    const format_ref::RefResult& want, MismatchLog& log) {
  const std::uint32_t code = format::encode(f, mode, x);
  format::RoundFlags flags;
  const std::uint32_t bits = format::round_bits(f, mode, bits_of(x), 0u, flags);
  const std::uint32_t want_bits = format_ref::expected_float_bits(want);
  if (code == want.code && bits == want_bits && flags.overflow == want.overflow &&
      flags.underflow == want.underflow) {
    return;
  }
  log.add(std::string(format_name) + " " + std::string(rounding_label(mode)) + " input " + describe(x) +
          ": expected code " + hex(want.code) + " value " + describe(float_of(want_bits)) +
          flags_text(want.overflow, want.underflow) + "; got code " + hex(code) + " value " +
          describe(float_of(bits)) + flags_text(flags.overflow, flags.underflow));
}

}  // namespace altgrad::format_test
