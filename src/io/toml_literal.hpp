#pragma once
// TOML literals for values we write ourselves: the shortest text that reads back as the same value
// (toml++'s printer writes 17 significant digits, so 6e-4 would come out as 0.00059999999999999995).
#include <cstdint>
#include <string>
#include <string_view>

namespace altgrad::io {

// Shortest round-trip form, always with a '.' or an exponent so TOML reads a float: 1.0, 0.001,
// 1e-07, inf, -inf, nan.
std::string toml_float(double value);

// A single-line basic string: quotes, backslashes and control characters escaped; other UTF-8
// passes through.
std::string toml_string(std::string_view text);

}  // namespace altgrad::io
