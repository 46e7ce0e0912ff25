#pragma once
// The numbers `altgrad quantize` reads: one whitespace-free token each.
#include <string>

namespace altgrad::cli {

// A decimal number (an optional '+' or '-', then what std::from_chars reads in general format),
// nan, inf or -inf, correctly rounded to float; values beyond float's range become ±Inf or ±0.
// False when the token is anything else, or has anything after the number.
bool parse_number_token(const std::string& token, float& out);

}  // namespace altgrad::cli
