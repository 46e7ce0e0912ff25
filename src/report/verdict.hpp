#pragma once
// A group's verdict on a success criterion ("within max_gap_pct of the baseline's final val loss"),
// from the paired comparison of its seeds with the baseline's (statistics.hpp):
//   fail          a run of the group diverged, or the gap's 95% interval lies above the threshold;
//   inconclusive  fewer paired seeds than min_seeds, a run short of min_steps, or an interval that
//                 straddles the threshold;
//   pass          otherwise: the interval's upper end is within the threshold.
// judge() decides one verdict alone at 95%; the report then corrects the sweep's verdicts for
// their number (verdict_correction.hpp), and shows both.
#include <cstdint>
#include <optional>
#include <string>

#include "report/statistics.hpp"
#include "report/index_reader.hpp"

namespace altgrad::report {

enum class Verdict { pass, fail, inconclusive };
const char* verdict_name(Verdict v);

// "within 2% of bf16 (3 seeds, 1000 steps)", as the report's tables name a criterion.
std::string criterion_name(const Criterion& c);

// What the judgement reads besides the gap: the group's diverged runs and the fewest steps any run
// of the group or its baseline reached.
struct VerdictInputs {
  PairedGap gap;
  int diverged = 0;
  std::size_t runs = 0;
  std::int64_t fewest_steps = 0;
};

struct Judgement {
  Verdict verdict = Verdict::inconclusive;
  std::string why;  // the numbers behind it, in words
  // Where the interval decided: the two-sided p-value of "gap = threshold" (Student t on the
  // paired gaps; 0 when they are all equal and off the threshold).
  std::optional<double> p_value{};
};
Judgement judge(const Criterion& criterion, const VerdictInputs& in);

// The pieces of judge()'s interval rule, which the correction reuses at its own levels: the
// two-sided p-value of "gap = threshold"; pass / fail / inconclusive from an interval; and the
// words for it ("upper end within 2%", "lower end above 2%", "straddles 2%").
double threshold_p_value(const MeanEstimate& gap, double threshold);
Verdict interval_verdict(double low, double high, double threshold);
std::string interval_reading(Verdict v, double threshold);

}  // namespace altgrad::report
