#include "report/verdict.hpp"

#include <cstdio>

namespace altgrad::report {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::fail: return "fail";
    case Verdict::inconclusive: return "inconclusive";
  }
  return "?";
}

std::string criterion_name(const Criterion& c) {
  char text[64];
  std::snprintf(text, sizeof text, "within %g%% of ", c.max_gap_pct);
  return text + c.baseline + " (" + std::to_string(c.min_seeds) + " seeds, " + std::to_string(c.min_steps) + " steps)";
}

Judgement judge(const Criterion& c, const VerdictInputs& in) {
  const MeanEstimate& e = in.gap.gap_pct;
  char text[200];
  if (in.diverged > 0) {
    std::snprintf(text, sizeof text, "%d of %zu runs diverged", in.diverged, in.runs);
    return {Verdict::fail, text};
  }
  if (static_cast<std::int64_t>(e.n) < c.min_seeds || !e.ci_low) {
    std::snprintf(text, sizeof text, "%zu paired seed%s, %lld needed%s", e.n, e.n == 1 ? "" : "s",
                  static_cast<long long>(c.min_seeds), e.n < 2 ? " (an interval needs 2)" : "");
    return {Verdict::inconclusive, text};
  }
  if (in.fewest_steps < c.min_steps) {
    std::snprintf(text, sizeof text, "a run reached step %lld of the %lld needed", static_cast<long long>(in.fewest_steps),
                  static_cast<long long>(c.min_steps));
    return {Verdict::inconclusive, text};
  }
  std::snprintf(text, sizeof text, "gap %+.2f%% [%+.2f, %+.2f] over %zu seeds", e.mean, *e.ci_low, *e.ci_high, e.n);
  std::string why = text;
  std::snprintf(text, sizeof text, "%g%%", c.max_gap_pct);
  if (*e.ci_high <= c.max_gap_pct) return {Verdict::pass, why + ", upper end within " + text};
  if (*e.ci_low > c.max_gap_pct) return {Verdict::fail, why + ", lower end above " + text};
  return {Verdict::inconclusive, why + ", straddles " + text};
}

}  // namespace altgrad::report
