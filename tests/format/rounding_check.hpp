#pragma once
// One comparison of the implementation's rounding against the reference: the code encode()
// returns, the float32 bits round_bits() returns, and its RoundFlags.
#include <string_view>

#include "format/codec.hpp"
#include "mismatch_log.hpp"
#include "reference_rounding.hpp"

namespace altgrad::format_test {

// Adds a reproduction to `log` when encode/round_bits disagree with `want` for input x.
void check_rounding(const format::Format& f, std::string_view format_name, format::Rounding mode, float x,
                    const format_ref::RefResult& want, MismatchLog& log);

}  // namespace altgrad::format_test
