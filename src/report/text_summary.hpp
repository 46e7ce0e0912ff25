#pragma once
// The report in a few lines for a terminal: one line per group that is not its own bf16 baseline,
// with its final validation loss and its gap to bf16 (what the main job prints when it ends).
#include <string>

#include "report/report_model.hpp"

namespace altgrad::report {

// "e3m4        val loss 2.1234 ± 0.0123 (3 seeds)  +3.21% vs bf16 (2.0573)  paired +3.19% [+2.80,
// +3.58], 3 of 3 seeds agree: resolved  warnings 3-5 per run", in group order: the mean with its 95%
// interval's half width, the gap between the group means, the paired comparison (statistics.hpp),
// and the warnings its started runs raised (warning_count.hpp). Groups with no gap say why ("no
// bf16 baseline", "no val loss yet"), and diverged runs are counted.
std::string text_summary(const Report& report);

}  // namespace altgrad::report
