#pragma once
// A group's verdict on a success criterion ("within max_gap_pct of the baseline's final val loss"),
// from the paired comparison of its seeds with the baseline's (statistics.hpp):
//   fail          a run of the group diverged, or the gap's 95% interval lies above the threshold;
//   inconclusive  fewer paired seeds than min_seeds, a run short of min_steps, or an interval that
//                 straddles the threshold;
//   pass          otherwise: the interval's upper end is within the threshold.
#include <cstdint>
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
};
Judgement judge(const Criterion& criterion, const VerdictInputs& in);

}  // namespace altgrad::report
