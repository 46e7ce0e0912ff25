#pragma once
// The report in a few lines for a terminal: one line per group that is not its own bf16 baseline,
// with its final validation loss and its gap to bf16 (what the main job prints when it ends).
#include <string>

#include "report/report_model.hpp"

namespace altgrad::report {

// "e3m4        val loss 2.1234  +3.21% vs bf16 (2.0573)", in group order; groups with no gap say
// why ("no bf16 baseline", "no val loss yet"), and diverged runs are counted.
std::string text_summary(const Report& report);

}  // namespace altgrad::report
