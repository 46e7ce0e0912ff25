// `altgrad quantize` input: the first line is a format name, the rest are whitespace-separated
// tokens as the command reads them from stdin. An accepted token must be exactly what strtof reads
// from all of it (glibc's strtof rounds correctly: an independent reference), and its quantized
// value must be the value its code decodes to.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "cli/number_token.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "fuzz_support.hpp"

using namespace altgrad;

namespace {

bool same_float(float a, float b) {
  std::uint32_t x = 0, y = 0;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y || (a != a && b != b);
}

void check_token(const std::string& token, const format::Format* f) {
  float value = 0;
  if (!cli::parse_number_token(token, value)) return;  // the command reports it with its index
  char* end = nullptr;
  const float reference = std::strtof(token.c_str(), &end);
  if (end != token.c_str() + token.size()) fuzz::fail("accepted '" + token + "', which strtof does not read whole");
  if (!same_float(value, reference)) {
    fuzz::fail("'" + token + "' read as " + std::to_string(value) + ", strtof gives " + std::to_string(reference));
  }
  if (!f) return;
  format::RoundFlags flags;
  const std::uint32_t bits = format::round_bits(*f, format::Rounding::nearest_even, format::float_bits(value), 0, flags);
  const float decoded = format::decode(*f, format::code_of_grid_value(*f, bits));
  if (!same_float(decoded, format::bits_float(bits))) fuzz::fail("'" + token + "': code does not decode to its value");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text({data, size});
  const std::size_t newline = text.find('\n');
  format::Format f{};
  const format::Format* format = nullptr;
  try {
    const format::FormatSpec spec = format::parse_format(text.substr(0, newline));
    if (format::validation_error(spec).empty()) {
      f = format::make_format(spec);
      format = &f;
    }
  } catch (const format::FormatError&) {
    // tokens are still checked on their own
  }
  std::istringstream in(std::string(newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1)));
  std::string token;
  while (in >> token) check_token(token, format);
  return 0;
}
