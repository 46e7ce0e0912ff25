#pragma once
// The verdicts of one sweep corrected for their number. A sweep with 40 verdicts each decided at
// 95% gives about two wrong passes or fails by chance alone; Holm's procedure (multiple_comparisons.hpp)
// keeps the chance of any at 5%. Each verdict that a paired interval decided is decided again from
// the interval at the level Holm's procedure gives it, and keeps judge()'s as `uncorrected`.
#include <string>
#include <vector>

#include "report/report_model.hpp"

namespace altgrad::report {

// Fills uncorrected, correction and seeds_needed, and sets judgement to the corrected verdict.
void correct_verdicts(std::vector<VerdictRow>& rows, const std::vector<Criterion>& criteria);

// The seeds for 80% power as the tables print them: a count, "over 1000", or empty where no
// interval decided the verdict.
std::string seeds_words(const VerdictRow& row);

}  // namespace altgrad::report
