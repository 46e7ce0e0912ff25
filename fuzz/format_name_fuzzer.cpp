// Format names (`--format`, config `format = ...`): parse_format either returns a spec that passes
// validation_error and whose shortest name parses back to it, or throws FormatError quoting the
// text it was given.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "fuzz_support.hpp"

using namespace altgrad;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text({data, size});
  format::FormatSpec spec;
  try {
    spec = format::parse_format(text);
  } catch (const format::FormatError& e) {
    // The message quotes the name, exactly when it is printable ASCII, and holds no control bytes.
    const std::string_view message = e.what();
    const bool printable = std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7F; });
    const std::string quoted = printable ? "invalid format '" + std::string(text) + "': " : "invalid format '";
    const bool control = std::any_of(message.begin(), message.end(), [](char c) { return c >= 0 && c < 0x20; });
    if (!message.starts_with(quoted) || control) {
      fuzz::fail("message does not quote the name: " + std::string(message));
    }
    return 0;
  }
  if (const std::string why = format::validation_error(spec); !why.empty()) fuzz::fail("accepted an invalid spec: " + why);
  const std::string name = format::format_name(spec);
  if (!(format::parse_format(name) == spec)) fuzz::fail("'" + std::string(text) + "' names a spec that '" + name + "' does not");
  // The spec makes a codec: a rounded value survives encode and decode (NaN stays NaN), at ordinary
  // values and at the grid's ends, where the format's step may be as fine as float32's.
  const format::Format f = format::make_format(spec);
  const float min_positive = format::bits_float(f.min_positive_bits);
  const float max_finite = format::bits_float(f.max_finite_bits);
  for (const float x : {1.0f, -0.3f, 3.0e38f, min_positive, std::nextafter(min_positive, 0.0f),
                        std::nextafter(min_positive, 1.0f), -max_finite, std::nextafter(max_finite, std::numeric_limits<float>::infinity())}) {
    const float q = format::round_value(f, format::Rounding::nearest_even, x);
    const float back = format::decode(f, format::encode(f, format::Rounding::nearest_even, q));
    if (!(back == q || (back != back && q != q))) fuzz::fail(name + ": " + std::to_string(q) + " does not survive its code");
  }
  return 0;
}
