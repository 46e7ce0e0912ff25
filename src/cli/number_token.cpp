#include "cli/number_token.hpp"

#include <charconv>
#include <cstdlib>
#include <system_error>

namespace altgrad::cli {

bool parse_number_token(const std::string& token, float& out) {
  const char* begin = token.data();
  const char* end = begin + token.size();
  // A '+' is allowed where from_chars allows none, but only before the digits: not "+-1".
  if (begin != end && *begin == '+' && (end - begin == 1 || begin[1] != '-')) ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, out);
  if (ptr != end) return false;  // anything after the number, even after one too large for float
  if (ec == std::errc::result_out_of_range) {
    // Beyond float32: from_chars reports the range error; the correctly rounded value is ±Inf or ±0.
    const double d = std::strtod(token.c_str(), nullptr);
    out = static_cast<float>(d);
    return true;
  }
  return ec == std::errc();
}

}  // namespace altgrad::cli
